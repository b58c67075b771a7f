package exporter

import (
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ioprobe/ioprobe/internal/cpuacct"
)

// A subCollector is one part of the exporter's data, node_exporter style:
// Update sends its metrics, and an error makes its
// scrape_collector_success 0 without failing the scrape. Describe lists
// every descriptor Update may use, so the registry checks them.
type subCollector interface {
	Describe(ch chan<- *prometheus.Desc)
	Update(ch chan<- prometheus.Metric) error
}

var (
	scrapeDurationDesc = prometheus.NewDesc("ioprobe_scrape_collector_duration_seconds",
		"How long each collector took during this scrape.", []string{"collector"}, nil)
	scrapeSuccessDesc = prometheus.NewDesc("ioprobe_scrape_collector_success",
		"1 if the collector succeeded during this scrape.", []string{"collector"}, nil)
)

// scrapeCollector runs the sub-collectors concurrently and reports each
// one's duration and success.
type scrapeCollector struct {
	collectors map[string]subCollector
	logger     *slog.Logger
}

func (c *scrapeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- scrapeDurationDesc
	ch <- scrapeSuccessDesc
	for _, sc := range c.collectors {
		sc.Describe(ch)
	}
}

func (c *scrapeCollector) Collect(ch chan<- prometheus.Metric) {
	var wg sync.WaitGroup
	for name, sc := range c.collectors {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			err := sc.Update(ch)
			ok := 1.0
			if err != nil {
				ok = 0
				c.logger.Error("collector failed", "collector", name, "err", err)
			}
			ch <- prometheus.MustNewConstMetric(scrapeDurationDesc, prometheus.GaugeValue, time.Since(start).Seconds(), name)
			ch <- prometheus.MustNewConstMetric(scrapeSuccessDesc, prometheus.GaugeValue, ok, name)
		}()
	}
	wg.Wait()
}

// hostCPUCollector exports /proc/stat's aggregate cpu line.
type hostCPUCollector struct {
	reader      cpuacct.Reader
	secs, cpus  *prometheus.Desc
	ticksPerSec float64
}

func newHostCPUCollector(procRoot string) *hostCPUCollector {
	return &hostCPUCollector{
		reader: cpuacct.Reader{ProcRoot: procRoot},
		secs: prometheus.NewDesc("ioprobe_host_cpu_seconds_total",
			"CPU time of the whole host, summed over all CPUs, by mode (/proc/stat; guest time is included in user and nice).", []string{"mode"}, nil),
		cpus: prometheus.NewDesc("ioprobe_host_cpus",
			"Online logical CPUs of the host (/proc/stat).", nil, nil),
		ticksPerSec: float64(cpuacct.UserHZ()),
	}
}

func (c *hostCPUCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.secs
	ch <- c.cpus
}

func (c *hostCPUCollector) Update(ch chan<- prometheus.Metric) error {
	st, err := c.reader.Stat()
	if err != nil {
		return err
	}
	a := st.All
	for _, m := range []struct {
		mode  string
		ticks uint64
	}{
		{"user", a.User}, {"nice", a.Nice}, {"system", a.System}, {"idle", a.Idle},
		{"iowait", a.IOWait}, {"irq", a.IRQ}, {"softirq", a.SoftIRQ}, {"steal", a.Steal},
	} {
		ch <- prometheus.MustNewConstMetric(c.secs, prometheus.CounterValue, float64(m.ticks)/c.ticksPerSec, m.mode)
	}
	ch <- prometheus.MustNewConstMetric(c.cpus, prometheus.GaugeValue, float64(len(st.CPUs)))
	return nil
}
