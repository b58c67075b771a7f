package test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// fleetJob is what the test reads of configs/kubernetes/fleet-job.yaml.
type fleetJob struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Spec       struct {
		CompletionMode string `yaml:"completionMode"`
		Completions    int    `yaml:"completions"`
		Parallelism    int    `yaml:"parallelism"`
		BackoffLimit   *int   `yaml:"backoffLimit"`
		Template       struct {
			Spec struct {
				RestartPolicy string `yaml:"restartPolicy"`
				Containers    []struct {
					Name string   `yaml:"name"`
					Args []string `yaml:"args"`
					Env  []struct {
						Name      string `yaml:"name"`
						Value     string `yaml:"value"`
						ValueFrom *struct {
							FieldRef struct {
								FieldPath string `yaml:"fieldPath"`
							} `yaml:"fieldRef"`
						} `yaml:"valueFrom"`
					} `yaml:"env"`
					VolumeMounts []struct {
						Name      string `yaml:"name"`
						MountPath string `yaml:"mountPath"`
					} `yaml:"volumeMounts"`
				} `yaml:"containers"`
				Volumes []struct {
					Name                  string `yaml:"name"`
					PersistentVolumeClaim *struct {
						ClaimName string `yaml:"claimName"`
					} `yaml:"persistentVolumeClaim"`
				} `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

// kubeVarRE is the kubelet's $(VAR) expansion in args.
var kubeVarRE = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// TestFleetJobManifest: the Indexed Job parses; its pods' command line,
// expanded as the kubelet would with the test's own directories in place
// of the volumes, is one `ioprobe run --dry-run` accepts; run for real as
// three pods would (each on its own "node" directory, one start instant,
// durations shortened), its results merge with `ioprobe report --merge`
// into one whose op count is the sum of the pods'.
func TestFleetJobManifest(t *testing.T) {
	besideOthers(t)
	b, err := os.ReadFile("../configs/kubernetes/fleet-job.yaml")
	require.NoError(t, err)
	var job *fleetJob
	claims := map[string]bool{}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	for {
		var doc struct {
			Kind     string `yaml:"kind"`
			Metadata struct {
				Name string `yaml:"name"`
			} `yaml:"metadata"`
		}
		var node yaml.Node
		if err := dec.Decode(&node); err == io.EOF {
			break
		} else {
			require.NoError(t, err)
		}
		require.NoError(t, node.Decode(&doc))
		switch doc.Kind {
		case "Job":
			job = &fleetJob{}
			require.NoError(t, node.Decode(job))
		case "PersistentVolumeClaim":
			claims[doc.Metadata.Name] = true
		default:
			t.Fatalf("unexpected kind %q", doc.Kind)
		}
	}
	require.NotNil(t, job)
	require.Equal(t, "batch/v1", job.APIVersion)
	require.Equal(t, "Indexed", job.Spec.CompletionMode)
	require.Positive(t, job.Spec.Completions)
	require.Equal(t, job.Spec.Completions, job.Spec.Parallelism, "every pod at once")
	require.NotNil(t, job.Spec.BackoffLimit)
	require.Zero(t, *job.Spec.BackoffLimit, "a retried pod would miss the start")
	pod := job.Spec.Template.Spec
	require.Equal(t, "Never", pod.RestartPolicy)
	require.Len(t, pod.Containers, 1)
	c := pod.Containers[0]
	env := map[string]string{}
	for _, e := range c.Env {
		if e.ValueFrom != nil {
			require.Equal(t, "JOB_COMPLETION_INDEX", e.Name)
			require.Equal(t, "metadata.annotations['batch.kubernetes.io/job-completion-index']", e.ValueFrom.FieldRef.FieldPath)
			continue
		}
		env[e.Name] = e.Value
	}
	at, err := time.Parse(time.RFC3339, env["START_AT"])
	require.NoError(t, err, "START_AT is an absolute instant (a relative one would differ per pod)")
	require.Equal(t, time.UTC, at.Location())
	for _, v := range pod.Volumes {
		if v.PersistentVolumeClaim != nil {
			require.True(t, claims[v.PersistentVolumeClaim.ClaimName], "the claim %s is in the file", v.PersistentVolumeClaim.ClaimName)
		}
	}
	mounts := map[string]bool{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = true
	}
	require.Equal(t, "run", c.Args[0])
	for _, want := range []string{"--start-at=$(START_AT)", "--output=json", "--out=/results/$(JOB_COMPLETION_INDEX).json"} {
		require.Contains(t, c.Args, want)
	}

	// Not in the kustomization: applying the DaemonSet must not start a
	// benchmark at a stale instant.
	k, err := os.ReadFile("../configs/kubernetes/kustomization.yaml")
	require.NoError(t, err)
	require.NotContains(t, string(k), "fleet-job.yaml")

	// The pods' command lines, as the kubelet expands them, with each
	// pod's volumes in a directory of the test's.
	dir := t.TempDir()
	results := filepath.Join(dir, "results")
	require.NoError(t, os.Mkdir(results, 0o755))
	podArgs := func(index int, startAt string, short bool) []string {
		data := filepath.Join(dir, "node"+strconv.Itoa(index))
		require.NoError(t, os.MkdirAll(data, 0o755))
		vars := map[string]string{"START_AT": startAt, "JOB_COMPLETION_INDEX": strconv.Itoa(index)}
		var args []string
		for _, a := range c.Args {
			a = kubeVarRE.ReplaceAllStringFunc(a, func(m string) string {
				v, ok := vars[kubeVarRE.FindStringSubmatch(m)[1]]
				require.True(t, ok, "%s is not defined in the container's env", m)
				return v
			})
			for _, p := range []struct{ mount, local string }{{"/data", data}, {"/results", results}} {
				if i := strings.Index(a, "="+p.mount+"/"); i >= 0 {
					require.True(t, mounts[p.mount], "%s is not mounted", p.mount)
					a = a[:i+1] + p.local + a[i+1+len(p.mount):]
				}
			}
			if short {
				switch {
				case strings.HasPrefix(a, "--size="):
					a = "--size=16MiB"
				case strings.HasPrefix(a, "--ramp="):
					a = "--ramp=200ms"
				case strings.HasPrefix(a, "--duration="):
					a = "--duration=1s"
				}
			}
			args = append(args, a)
		}
		return args
	}
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	o := ioprobe(t, dir, append(podArgs(0, future, false), "--dry-run")...)
	require.Equal(t, 0, o.code, "the manifest's command line: %s", o.stderr)
	require.NoFileExists(t, filepath.Join(results, "0.json"))

	// Three pods, one instant a few seconds ahead (the files are created
	// and filled first: 16 MiB each).
	start := time.Now().Add(4 * time.Second).UTC().Truncate(time.Second).Add(time.Second)
	var pods []*background
	for i := range 3 {
		pods = append(pods, startBackground(t, podArgs(i, start.Format(time.RFC3339), true)...))
	}
	var files []string
	var sum uint64
	for i, p := range pods {
		require.Equal(t, 0, p.exitCode(t), "pod %d: %s", i, p.errb.String())
		f := filepath.Join(results, fmt.Sprintf("%d.json", i))
		files = append(files, f)
		r := readResult(t, f)
		require.True(t, r.StartAt.Equal(start), "pod %d start_at %s", i, r.StartAt)
		require.False(t, r.StartedAt.Before(start))
		sum += r.Summary.Ops
	}
	o = ioprobe(t, dir, append([]string{"report", "--merge", "--output", "json"}, files...)...)
	require.Equal(t, 0, o.code, o.stderr)
	merged := decodeResult(t, o.stdout)
	require.Equal(t, sum, merged.Summary.Ops)
	require.Equal(t, 3, merged.Merged.Runs)
	require.True(t, merged.StartAt.Equal(start), "the merge keeps the common instant")
}

// readResult decodes one ioprobe.result/v1 file.
func readResult(t *testing.T, path string) *result.Result {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	_, rs, err := result.Decode(f)
	require.NoError(t, err)
	require.Len(t, rs, 1)
	return rs[0]
}
