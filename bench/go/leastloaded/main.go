// Command leastloaded is a small, faithful Go port of sandbox-extender's least_loaded selection, for the
// in-process benchmark (bench/bench.ts), which measures both in the same run:
//
//   - the candidate scan (src/core/fit/scan.ts CandidateScan.run): each candidate looked up by name, its
//     projected pressure max_r (inUse_r + q_r) / allocatable_r (src/core/objects/pressure.ts pressureRatio; no value
//     where allocatable_r is 0), the fit rule per requested dimension and the starting limit;
//   - the choice (src/core/fit/strategies/strategy.ts chooseBest, compareByLoad): known capacity first, lower
//     pressure, then fewer starting, running, paused sandboxes, exact ties taken in turn.
//
// It reads the nodes and the pod's request as JSON on stdin, replays the TypeScript side's validation (the
// first `validate` selections, each reserving the chosen node) and prints the chosen indices, then times
// one selection over the unchanged nodes with Go's own benchmark harness (testing.Benchmark).
package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"testing"
)

// NodeInfo is the port of src/core/cache/nodeInfo.ts NodeInfo (amounts in scheduler units).
type NodeInfo struct {
	Name          string    `json:"name"`
	HasNode       bool      `json:"hasNode"`
	Allocatable   []float64 `json:"allocatable"` // nil: capacity unknown
	Allocated     []float64 `json:"allocated"`
	Paused        []float64 `json:"paused"`
	Reserved      []float64 `json:"reserved"`
	Starting      int32     `json:"starting"`
	Running       int32     `json:"running"`
	PausedCount   int32     `json:"pausedCount"`
	ReservedCount int32     `json:"reservedCount"`
	StartingLimit *float64  `json:"startingLimit"` // nil: no limit
}

type input struct {
	Request  []float64   `json:"request"`
	Nodes    []*NodeInfo `json:"nodes"`
	Validate int         `json:"validate"`
}

const (
	fits                = 0
	fitsCapacityUnknown = 1
	doesNotFit          = 2
	notInCache          = 3
)

// scan is the port of CandidateScan: reused arrays, no allocation per candidate.
type scan struct {
	lookup                    map[string]*NodeInfo
	count, feasible           int
	status                    []uint8
	pressure                  []float64
	starting, running, paused []int32
	scratch                   []int32
	tieCursor                 int
}

func pressureRatio(used, allocatable float64) float64 {
	if allocatable > 0 {
		return used / allocatable
	}
	return math.NaN()
}

func dimensionFit(request, inUsePlusRequest, allocatable float64) int {
	if request <= 0 {
		return 0
	}
	if request > allocatable {
		return 2
	}
	if inUsePlusRequest > allocatable {
		return 1
	}
	return 0
}

func (s *scan) run(request []float64, names []string) {
	n := len(names)
	if len(s.status) < n {
		s.status = make([]uint8, n)
		s.pressure = make([]float64, n)
		s.starting = make([]int32, n)
		s.running = make([]int32, n)
		s.paused = make([]int32, n)
		s.scratch = make([]int32, n)
	}
	s.count = n
	feasible := 0
	for i, name := range names {
		info := s.lookup[name]
		if info == nil || !info.HasNode {
			s.status[i] = notInCache
			s.pressure[i] = math.NaN()
			continue
		}
		starting := info.Starting + info.ReservedCount
		s.starting[i] = starting
		s.running[i] = info.Running
		s.paused[i] = info.PausedCount
		atLimit := info.StartingLimit != nil && float64(starting) >= *info.StartingLimit
		if info.Allocatable == nil {
			if atLimit {
				s.status[i] = doesNotFit
			} else {
				s.status[i] = fitsCapacityUnknown
				feasible++
			}
			s.pressure[i] = math.NaN()
			continue
		}
		pressure := 0.0
		fit := 0
		if atLimit {
			fit = 1
		}
		for r, a := range info.Allocatable {
			total := info.Allocated[r] + info.Paused[r] + info.Reserved[r] + request[r]
			if p := pressureRatio(total, a); p > pressure {
				pressure = p
			}
			if fit == 0 {
				fit = dimensionFit(request[r], total, a)
			}
		}
		s.pressure[i] = pressure
		if fit == 0 {
			s.status[i] = fits
			feasible++
		} else {
			s.status[i] = doesNotFit
		}
	}
	s.feasible = feasible
}

func (s *scan) fits(i int) bool { return s.status[i] <= fitsCapacityUnknown }

func (s *scan) capacityKnown(i int) bool { return !math.IsNaN(s.pressure[i]) }

// compareByLoad: negative when i comes first (least_loaded: pressure sign +1).
func (s *scan) compareByLoad(i, j int) float64 {
	knownI, knownJ := s.capacityKnown(i), s.capacityKnown(j)
	if knownI != knownJ {
		if knownI {
			return -1
		}
		return 1
	}
	if knownI && s.pressure[i] != s.pressure[j] {
		return s.pressure[i] - s.pressure[j]
	}
	if d := s.starting[i] - s.starting[j]; d != 0 {
		return float64(d)
	}
	if d := s.running[i] - s.running[j]; d != 0 {
		return float64(d)
	}
	return float64(s.paused[i] - s.paused[j])
}

// chooseBest: the first candidate in load order in one pass; among exact equals the next in turn.
func (s *scan) chooseBest() (chosen, runnerUp int) {
	if s.feasible == 0 {
		return -1, -1
	}
	ties := s.scratch
	tieCount := 0
	best, second := -1, -1
	for i := 0; i < s.count; i++ {
		if !s.fits(i) {
			continue
		}
		if best < 0 {
			best = i
			ties[tieCount] = int32(i)
			tieCount++
			continue
		}
		c := s.compareByLoad(i, best)
		if c < 0 {
			second = best
			best = i
			ties[0] = int32(i)
			tieCount = 1
		} else if c == 0 {
			ties[tieCount] = int32(i)
			tieCount++
		} else if second < 0 || s.compareByLoad(i, second) < 0 {
			second = i
		}
	}
	if tieCount <= 1 {
		return best, second
	}
	k := s.tieCursor % tieCount
	s.tieCursor++
	other := 0
	if k == 0 {
		other = 1
	}
	return int(ties[k]), int(ties[other])
}

func main() {
	var in input
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		fmt.Fprintln(os.Stderr, "leastloaded: reading the input:", err)
		os.Exit(2)
	}
	names := make([]string, len(in.Nodes))
	fresh := func() *scan {
		s := &scan{lookup: make(map[string]*NodeInfo, len(in.Nodes))}
		for i, n := range in.Nodes {
			copied := *n
			copied.Reserved = append([]float64(nil), n.Reserved...)
			s.lookup[n.Name] = &copied
			names[i] = n.Name
		}
		return s
	}

	// Validation: each selection reserves the chosen node, as the TypeScript side did.
	v := fresh()
	chosen := make([]int, 0, in.Validate)
	for k := 0; k < in.Validate; k++ {
		v.run(in.Request, names)
		c, _ := v.chooseBest()
		chosen = append(chosen, c)
		if c >= 0 {
			info := v.lookup[names[c]]
			for r := range info.Reserved {
				info.Reserved[r] += in.Request[r]
			}
			info.ReservedCount++
		}
	}

	// Timing: one selection over the unchanged nodes, as many times as Go's harness asks for.
	s := fresh()
	sink := 0
	result := testing.Benchmark(func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			s.run(in.Request, names)
			c, _ := s.chooseBest()
			sink += c
		}
	})
	out := map[string]any{"chosen": chosen, "nsPerOp": float64(result.T.Nanoseconds()) / float64(result.N), "n": result.N, "sink": sink}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		os.Exit(1)
	}
}
