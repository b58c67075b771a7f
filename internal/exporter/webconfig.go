package exporter

import (
	"context"
	"errors"
	"log/slog"
	"regexp"
	"strings"
)

// exporter-toolkit reads --web.config.file again for every request and
// logs why it cannot ("Unable to parse configuration") with yaml.v2's
// error, which quotes the file: an unknown key's text and a value it
// cannot take. Pointed at /etc/shadow (a symlink repointed), the daemon's
// log would carry root's password hash. Its errors reach the log and the
// start-up refusal only through webConfigError, which keeps their line
// numbers and none of the file's text.

// yamlLine finds the line numbers yaml.v2 gives ("line 3: …").
var yamlLine = regexp.MustCompile(`\bline (\d+)\b`)

// webConfigError is err, from reading or checking the web config file,
// without the file's text: a YAML error is said as its line numbers; any
// other error (a TLS file that does not load, a bcrypt hash that is not
// one) names files and reasons, not the config's lines, and is kept.
func webConfigError(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "yaml: ") {
		return err
	}
	var lines []string
	for _, m := range yamlLine.FindAllStringSubmatch(msg, -1) {
		lines = append(lines, "line "+m[1])
	}
	where := ""
	if len(lines) > 0 {
		where = strings.Join(lines, ", ") + ": "
	}
	if strings.HasPrefix(msg, "yaml: unmarshal errors:") {
		return errors.New("yaml: " + where + "not an exporter-toolkit web configuration: an unknown key, or a value of the wrong type (the file's text is not shown)")
	}
	return errors.New("yaml: " + where + "not valid YAML (the file's text is not shown)")
}

// webConfigLog is the handler of exporter-toolkit's logger: its records
// go to the daemon's log with an "err" that is a web config error said
// by webConfigError.
type webConfigLog struct{ slog.Handler }

func (h webConfigLog) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "err" {
			a.Value = slog.StringValue(webConfigError(errors.New(a.Value.String())).Error())
		}
		out.AddAttrs(a)
		return true
	})
	return h.Handler.Handle(ctx, out)
}

func (h webConfigLog) WithAttrs(as []slog.Attr) slog.Handler {
	return webConfigLog{h.Handler.WithAttrs(as)}
}

func (h webConfigLog) WithGroup(name string) slog.Handler {
	return webConfigLog{h.Handler.WithGroup(name)}
}
