package dashquery

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// Dashboard is the part of a dashboard file that reaches Prometheus.
type Dashboard struct {
	UID   string `json:"uid"`
	Title string `json:"title"`
	// Panels are every panel, those inside collapsed rows included, rows
	// themselves left out.
	Panels      []Panel
	Variables   []Variable
	Annotations []Annotation
}

// Panel is one panel and its queries.
type Panel struct {
	ID              int              `json:"id"`
	Type            string           `json:"type"`
	Title           string           `json:"title"`
	Targets         []Target         `json:"targets"`
	Transformations []Transformation `json:"transformations"`
	Options         json.RawMessage  `json:"options"`
}

// Target is one query of a panel.
type Target struct {
	RefID        string `json:"refId"`
	Expr         string `json:"expr"`
	Format       string `json:"format"`
	LegendFormat string `json:"legendFormat"`
	Instant      bool   `json:"instant"`
	Range        bool   `json:"range"`
}

// Transformation is one of a panel's data transformations.
type Transformation struct {
	ID      string         `json:"id"`
	Options map[string]any `json:"options"`
}

// Variable is a template variable.
type Variable struct {
	Name       string `json:"name"`
	Type       string `json:"type"`
	Query      any    `json:"query"`
	Multi      bool   `json:"multi"`
	IncludeAll bool   `json:"includeAll"`
	AllValue   string `json:"allValue"`
}

// Annotation is an annotation query; Expr is empty for Grafana's built-in one.
type Annotation struct {
	Name            string
	Expr            string
	Enable          bool
	UseValueForTime bool
}

// Load reads a dashboard file.
func Load(path string) (*Dashboard, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(b)
}

// Parse decodes a dashboard.
func Parse(b []byte) (*Dashboard, error) {
	var raw struct {
		UID        string `json:"uid"`
		Title      string `json:"title"`
		Panels     []json.RawMessage
		Templating struct {
			List []Variable `json:"list"`
		} `json:"templating"`
		Annotations struct {
			List []struct {
				Name            string `json:"name"`
				Enable          bool   `json:"enable"`
				Expr            string `json:"expr"`
				UseValueForTime bool   `json:"useValueForTime"`
				Target          *struct {
					Expr string `json:"expr"`
				} `json:"target"`
			} `json:"list"`
		} `json:"annotations"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	d := &Dashboard{UID: raw.UID, Title: raw.Title, Variables: raw.Templating.List}
	for _, a := range raw.Annotations.List {
		expr := a.Expr
		if a.Target != nil && a.Target.Expr != "" {
			expr = a.Target.Expr
		}
		d.Annotations = append(d.Annotations, Annotation{Name: a.Name, Expr: expr, Enable: a.Enable, UseValueForTime: a.UseValueForTime})
	}
	var walk func([]json.RawMessage) error
	walk = func(panels []json.RawMessage) error {
		for _, rp := range panels {
			var p struct {
				Panel
				Panels []json.RawMessage `json:"panels"`
			}
			if err := json.Unmarshal(rp, &p); err != nil {
				return err
			}
			if p.Type == "row" {
				if err := walk(p.Panels); err != nil {
					return err
				}
				continue
			}
			d.Panels = append(d.Panels, p.Panel)
		}
		return nil
	}
	if err := walk(raw.Panels); err != nil {
		return nil, err
	}
	return d, nil
}

// QueryString is a variable's query as text (Grafana stores it as a string
// or as an object with a query field).
func (v Variable) QueryString() string {
	switch q := v.Query.(type) {
	case string:
		return q
	case map[string]any:
		s, _ := q["query"].(string)
		return s
	}
	return ""
}

var labelValuesRE = regexp.MustCompile(`^\s*label_values\(\s*(?:(.*\S)\s*,\s*)?([a-zA-Z_][a-zA-Z0-9_]*)\s*\)\s*$`)

// LabelValues parses `label_values(series, label)` (series may be empty:
// `label_values(label)`).
func LabelValues(query string) (series, label string, ok bool) {
	m := labelValuesRE.FindStringSubmatch(query)
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}

// Grid reads a panel's groupingToMatrix transformation: the label whose
// values become rows, the label whose values become columns, and whether
// the rows are then converted to numbers.
func (p Panel) Grid() (row, col string, numeric, ok bool) {
	for _, t := range p.Transformations {
		switch t.ID {
		case "groupingToMatrix":
			row, _ = t.Options["rowField"].(string)
			col, _ = t.Options["columnField"].(string)
			ok = true
		case "convertFieldType":
			numeric = strings.Contains(fmt.Sprint(t.Options["conversions"]), "destinationType:number")
		}
	}
	return row, col, numeric, ok
}

// Columns are the column names a panel's organize transformation orders,
// in order, the row header left out.
func (p Panel) Columns() []string {
	for _, t := range p.Transformations {
		if t.ID != "organize" {
			continue
		}
		idx, _ := t.Options["indexByName"].(map[string]any)
		out := make([]string, len(idx))
		for name, i := range idx {
			n, _ := i.(float64)
			if int(n) < len(out) {
				out[int(n)] = name
			}
		}
		if len(out) > 0 {
			return out[1:]
		}
	}
	return nil
}
