// Command authflood measures an authorised scrape of `ioprobe serve`
// while clients with wrong passwords flood it (issue 21 item 7).
//
//	go run ./scripts/authflood -ioprobe bin/ioprobe[,bin/ioprobe-old] [-flood 64] [-duration 10s] [-cost 10] [-rounds 3]
//
// For each binary in turn (interleaved over -rounds), it starts the
// daemon on a free port of 127.0.0.1 with a web config asking for basic
// auth (user prom, a bcrypt hash of -cost), checks that the authorised
// scrape works, then runs -flood clients that send GET /metrics with a
// new random wrong password each, back to back, for -duration, while one
// authorised client (keep-alive, as Prometheus) scrapes /metrics every
// 250 ms. It reports, per binary and round, the authorised scrapes'
// median and worst latency and how many were not 200, and what the
// flood got (requests per second by status). The daemon is stopped
// (SIGTERM) after each round and its directory removed. Markdown goes to
// standard output.
package main

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/crypto/bcrypt"
)

type options struct {
	bins     []string
	flood    int
	duration time.Duration
	cost     int
	rounds   int
}

// outcome is one round of one binary.
type outcome struct {
	bin           string
	round         int
	scrapes       []time.Duration
	failed        int // authorised scrapes not answered 200
	floodByStatus map[string]int
	elapsed       time.Duration
}

func main() {
	var o options
	var bins string
	flag.StringVar(&bins, "ioprobe", "bin/ioprobe", "ioprobe binaries to compare, comma-separated")
	flag.IntVar(&o.flood, "flood", 64, "concurrent clients with wrong passwords")
	flag.DurationVar(&o.duration, "duration", 10*time.Second, "how long the flood lasts in each round")
	flag.IntVar(&o.cost, "cost", bcrypt.DefaultCost, "bcrypt cost of the password hash")
	flag.IntVar(&o.rounds, "rounds", 3, "rounds per binary, interleaved")
	flag.Parse()
	o.bins = strings.Split(bins, ",")
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "authflood:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), o.cost)
	if err != nil {
		return err
	}
	var all []outcome
	for r := 1; r <= o.rounds; r++ {
		for i := range o.bins {
			bin := o.bins[(i+r)%len(o.bins)] // the order turns every round
			res, err := round(o, bin, r, hash)
			if err != nil {
				return fmt.Errorf("%s round %d: %w", bin, r, err)
			}
			all = append(all, res)
			fmt.Fprintf(os.Stderr, "authflood: %s round %d: authorised scrape median %s, worst %s, %d not 200\n",
				bin, r, median(res.scrapes), slices.Max(res.scrapes), res.failed)
		}
	}
	report(o, all)
	return nil
}

var listening = regexp.MustCompile(`msg="Listening on" address=(\S+)`)

// round runs one daemon through one flood.
func round(o options, bin string, r int, hash []byte) (outcome, error) {
	res := outcome{bin: bin, round: r, floodByStatus: map[string]int{}}
	dir, err := os.MkdirTemp("", "authflood-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	web := filepath.Join(dir, "web.yml")
	cfg := filepath.Join(dir, "ioprobe.yaml")
	if err := os.WriteFile(web, fmt.Appendf(nil, "basic_auth_users:\n  prom: %s\n", hash), 0o600); err != nil {
		return res, err
	}
	if err := os.WriteFile(cfg, fmt.Appendf(nil, "targets:\n  data: {path: %s, size: 8MiB}\nmodules:\n  quick: {profile: random-read, max_duration: 200ms}\n", filepath.Join(dir, "probe.dat")), 0o600); err != nil {
		return res, err
	}
	cmd := exec.Command(bin, "serve", "--config", cfg, "--web.config.file", web, "--web.listen-address", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return res, err
	}
	if err := cmd.Start(); err != nil {
		return res, err
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}()
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
		}
	}()
	var base string
	select {
	case a := <-addr:
		base = "http://" + a
	case <-time.After(30 * time.Second):
		return res, errors.New("the daemon did not say where it listens within 30 s")
	}

	authorised := &http.Client{Timeout: 2 * time.Minute}
	scrape := func() (int, time.Duration, error) {
		req, _ := http.NewRequest(http.MethodGet, base+"/metrics", nil)
		req.SetBasicAuth("prom", "s3cret")
		t0 := time.Now()
		resp, err := authorised.Do(req)
		if err != nil {
			return 0, time.Since(t0), err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, time.Since(t0), nil
	}
	if code, _, err := scrape(); err != nil || code != http.StatusOK {
		return res, fmt.Errorf("the authorised scrape before the flood: %d %v", code, err)
	}

	var stop atomic.Bool
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	for range o.flood {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &http.Client{Timeout: 2 * time.Minute}
			counts := map[string]int{}
			for !stop.Load() {
				req, _ := http.NewRequest(http.MethodGet, base+"/metrics", nil)
				req.SetBasicAuth("prom", wrongPassword())
				resp, err := c.Do(req)
				if err != nil {
					counts["error"]++
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				counts[fmt.Sprint(resp.StatusCode)]++
			}
			mu.Lock()
			for k, v := range counts {
				res.floodByStatus[k] += v
			}
			mu.Unlock()
		}()
	}
	time.Sleep(time.Second) // the flood under way
	for time.Since(start) < o.duration {
		code, took, err := scrape()
		res.scrapes = append(res.scrapes, took)
		if err != nil || code != http.StatusOK {
			res.failed++
		}
		time.Sleep(250 * time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	res.elapsed = time.Since(start)
	return res, nil
}

func wrongPassword() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func report(o options, all []outcome) {
	fmt.Printf("# Authorised scrapes under a wrong-password flood\n\n")
	fmt.Printf("%d flooding clients (a new wrong password each request, back to back), bcrypt cost %d, %s per round, one authorised scrape every 250 ms (keep-alive).\n\n",
		o.flood, o.cost, o.duration)
	fmt.Println("| binary | round | authorised scrapes | median | worst | not 200 | flood req/s | flood answers |")
	fmt.Println("| --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, r := range all {
		total := 0
		var parts []string
		keys := make([]string, 0, len(r.floodByStatus))
		for k := range r.floodByStatus {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			total += r.floodByStatus[k]
			parts = append(parts, fmt.Sprintf("%s: %d", k, r.floodByStatus[k]))
		}
		fmt.Printf("| %s | %d | %d | %s | %s | %d | %.0f | %s |\n", r.bin, r.round, len(r.scrapes),
			median(r.scrapes).Round(time.Microsecond), slices.Max(r.scrapes).Round(time.Microsecond), r.failed,
			float64(total)/r.elapsed.Seconds(), strings.Join(parts, ", "))
	}
}
