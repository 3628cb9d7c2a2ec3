// Command loadgen is the load generator of the ceiling scenario (bench/ceiling.ts): it sends extender Filter
// requests to one URL at a fixed rate for a fixed time, open loop (vegeta's attacker: a request leaves at
// its scheduled time whether or not earlier ones were answered, so a slow server shows up as latency
// instead of as fewer requests sent), and prints one JSON line with what it measured.
//
// Every request body is the template file (-body) with each occurrence of the placeholder (-placeholder)
// replaced by a fresh pod UID, "<uid-prefix>-<n>", so that each request is a distinct pod, as kube-scheduler's
// are. A reply counts as placed when it is HTTP 200 with an empty Error and exactly one name in NodeNames
// (the extender's one-call Filter, chooseInFilter); anything else is counted by kind, with the first bodies kept.
//
//	loadgen -url http://127.0.0.1:8888/filter -body req.json -rate 500 -duration 10s -uid-prefix step3
//	loadgen ... -rate 0 -workers 1   (closed loop, one request in flight: the serial rate)
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

type summary struct {
	Rate        float64        `json:"rate"`
	DurationS   float64        `json:"durationSeconds"`
	Requests    uint64         `json:"requests"`
	Throughput  float64        `json:"throughput"`
	SentRate    float64        `json:"sentRate"`
	Placed      uint64         `json:"placed"`
	NotPlaced   uint64         `json:"notPlaced"`
	Failed      uint64         `json:"failed"`
	StatusCodes map[string]int `json:"statusCodes"`
	Errors      []string       `json:"errors"`
	Samples     []string       `json:"sampleBodies"`
	LatencyMs   latency        `json:"latencyMs"`
	Workers     uint64         `json:"workers"`
}

type latency struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

type filterResult struct {
	NodeNames []string
	Error     string
}

func main() {
	url := flag.String("url", "", "the extender's filter URL")
	bodyFile := flag.String("body", "", "request body template (JSON ExtenderArgs)")
	placeholder := flag.String("placeholder", "__POD_UID__", "text of the template replaced by each request's pod UID")
	uidPrefix := flag.String("uid-prefix", "ceiling", "prefix of the pod UIDs (make it unique per run)")
	rate := flag.Int("rate", 100, "requests per second; 0: as fast as -workers allow (closed loop)")
	duration := flag.Duration("duration", 10*time.Second, "how long to send")
	workers := flag.Uint64("workers", 10, "initial workers (requests in flight)")
	maxWorkers := flag.Uint64("max-workers", 2000, "most workers; with -rate 0 the only limit")
	timeout := flag.Duration("timeout", 30*time.Second, "per-request timeout")
	flag.Parse()
	if *url == "" || *bodyFile == "" {
		fmt.Fprintln(os.Stderr, "loadgen: -url and -body are required")
		os.Exit(2)
	}
	template, err := os.ReadFile(*bodyFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(2)
	}
	parts := bytes.Split(template, []byte(*placeholder))
	if len(parts) < 2 {
		fmt.Fprintf(os.Stderr, "loadgen: %s does not contain the placeholder %q\n", *bodyFile, *placeholder)
		os.Exit(2)
	}

	var n atomic.Uint64
	header := http.Header{"Content-Type": []string{"application/json"}}
	targeter := func(t *vegeta.Target) error {
		uid := []byte(fmt.Sprintf("%s-%d", *uidPrefix, n.Add(1)))
		t.Method = http.MethodPost
		t.URL = *url
		t.Header = header
		t.Body = bytes.Join(parts, uid)
		return nil
	}

	w := *workers
	if *rate == 0 && *maxWorkers > w {
		*maxWorkers = w // closed loop: exactly -workers in flight
	}
	attacker := vegeta.NewAttacker(
		vegeta.Workers(w),
		vegeta.MaxWorkers(*maxWorkers),
		vegeta.KeepAlive(true),
		vegeta.Timeout(*timeout),
		vegeta.Redirects(vegeta.NoFollow),
	)
	pacer := vegeta.Rate{Freq: *rate, Per: time.Second}

	var metrics vegeta.Metrics
	s := summary{Rate: float64(*rate), StatusCodes: map[string]int{}, Errors: []string{}, Samples: []string{}, Workers: w}
	for res := range attacker.Attack(vegeta.Targeter(targeter), pacer, *duration, "filter") {
		metrics.Add(res)
		if res.Code != http.StatusOK || res.Error != "" {
			s.Failed++
			if len(s.Samples) < 5 {
				s.Samples = append(s.Samples, fmt.Sprintf("HTTP %d %s %.300s", res.Code, res.Error, res.Body))
			}
			continue
		}
		var r filterResult
		if err := json.Unmarshal(res.Body, &r); err != nil || r.Error != "" || len(r.NodeNames) != 1 {
			s.NotPlaced++
			if len(s.Samples) < 5 {
				s.Samples = append(s.Samples, fmt.Sprintf("%.300s", res.Body))
			}
			continue
		}
		s.Placed++
	}
	metrics.Close()

	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	s.DurationS = metrics.Duration.Seconds()
	s.Requests = metrics.Requests
	s.Throughput = metrics.Throughput
	s.SentRate = metrics.Rate
	for code, count := range metrics.StatusCodes {
		s.StatusCodes[code] = count
	}
	if len(metrics.Errors) > 0 {
		s.Errors = metrics.Errors
	}
	s.LatencyMs = latency{
		Mean: ms(metrics.Latencies.Mean),
		P50:  ms(metrics.Latencies.P50),
		P90:  ms(metrics.Latencies.P90),
		P95:  ms(metrics.Latencies.P95),
		P99:  ms(metrics.Latencies.P99),
		Max:  ms(metrics.Latencies.Max),
	}
	if err := json.NewEncoder(os.Stdout).Encode(s); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}
