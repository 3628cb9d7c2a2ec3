// Command accounting is the Kubernetes side of the extender's differential accounting test
// (test/e2e/accounting.e2e.test.ts). It reads JSON values from stdin, one case each, and writes one JSON
// result line per case to stdout, in order:
//
//	{"q": "1.5Gi"}   -> resource.ParseQuantity, then MilliValue() and Value() as kube-scheduler reads them
//	{"pod": {...}}   -> component-helpers resource.PodRequests with the options kube-scheduler v1.36 uses
//	                    for an assigned pod and for an incoming pod
//
// Options, with the feature gates at their v1.36 defaults (pkg/features/kube_features.go):
//   - assigned pod (pkg/scheduler/framework/types.go: PodInfo.CalculateResource, used by NodeInfo.AddPod):
//     UseStatusResources = InPlacePodVerticalScaling (GA, on),
//     InPlacePodLevelResourcesVerticalScalingEnabled = InPlacePodLevelResourcesVerticalScaling (beta, on),
//     SkipPodLevelResources = !PodLevelResources (beta, on),
//     UseDRANodeAllocatableResourceClaimStatus = DRANodeAllocatableResources (alpha, off).
//   - incoming pod (pkg/scheduler/framework/plugins/noderesources/fit.go: computePodResourceRequest, called by
//     Fit.PreFilter): SkipPodLevelResources = !PodLevelResources (on); no status resources.
//
// Every number is printed as a decimal string (int64 and exact values do not fit a JSON double).
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"reflect"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
)

// maxShift bounds the power of ten used to print an exact value: an int64Amount may carry a decimal
// exponent up to 2^31 ("1e2147483647" parses on Go's fast path), whose exact digits are not worth computing.
const maxShift = 20000

var (
	assignedOptions = resourcehelper.PodResourcesOptions{
		UseStatusResources: true,
		InPlacePodLevelResourcesVerticalScalingEnabled: true,
		SkipPodLevelResources:                          false,
		UseDRANodeAllocatableResourceClaimStatus:       false,
	}
	incomingOptions = resourcehelper.PodResourcesOptions{
		SkipPodLevelResources:                    false,
		UseDRANodeAllocatableResourceClaimStatus: false,
	}
)

type input struct {
	Q   *string         `json:"q"`
	Pod json.RawMessage `json:"pod"`
}

type quantityResult struct {
	OK     bool    `json:"ok"`
	Err    string  `json:"err,omitempty"`
	Milli  string  `json:"milli,omitempty"`
	Value  string  `json:"value,omitempty"`
	Nanos  *string `json:"nanos,omitempty"`
	Dec    bool    `json:"dec,omitempty"`
	Format string  `json:"format,omitempty"`
}

type amount struct {
	Nanos  *string `json:"nanos"`
	Scaled string  `json:"scaled"`
}

type podResult struct {
	OK       bool              `json:"ok"`
	Err      string            `json:"err,omitempty"`
	Assigned map[string]amount `json:"assigned"`
	Incoming map[string]amount `json:"incoming"`
}

// nanos is the exact value × 10^9 (ParseQuantity rounds to a whole nano), or nil when too large to print.
func nanos(q resource.Quantity) *string {
	d := q.AsDec() // q is a copy: AsDec converts the representation in place
	shift := 9 - int(d.Scale())
	n := new(big.Int).Set(d.UnscaledBig())
	switch {
	case n.Sign() == 0:
	case shift > maxShift:
		return nil
	case shift >= 0:
		n.Mul(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(shift)), nil))
	default:
		n.Quo(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-shift)), nil))
	}
	s := n.String()
	return &s
}

// isDec tells whether the quantity is held as an inf.Dec (Go's slow path) rather than an int64Amount.
func isDec(q *resource.Quantity) bool {
	return !reflect.ValueOf(q).Elem().FieldByName("d").Field(0).IsNil()
}

func errName(err error) string {
	switch {
	case errors.Is(err, resource.ErrFormatWrong):
		return "ErrFormatWrong"
	case errors.Is(err, resource.ErrSuffix):
		return "ErrSuffix"
	case errors.Is(err, resource.ErrNumeric):
		return "ErrNumeric"
	default:
		return err.Error()
	}
}

func quantity(s string) quantityResult {
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return quantityResult{Err: errName(err)}
	}
	dec := isDec(&q)
	milli := q.MilliValue() // on the freshly parsed value: the representation decides negative rounding
	value := q.Value()
	return quantityResult{
		OK: true, Milli: fmt.Sprint(milli), Value: fmt.Sprint(value), Nanos: nanos(q), Dec: dec, Format: string(q.Format),
	}
}

// amounts converts a PodRequests result as the scheduler's (*Resource).Add does: cpu via MilliValue(),
// everything else via Value().
func amounts(list v1.ResourceList) map[string]amount {
	out := make(map[string]amount, len(list))
	for name, q := range list {
		var scaled int64
		if name == v1.ResourceCPU {
			scaled = q.MilliValue()
		} else {
			scaled = q.Value()
		}
		out[string(name)] = amount{Nanos: nanos(q), Scaled: fmt.Sprint(scaled)}
	}
	return out
}

// podRequests decodes the pod afresh for each call. PodRequests stores a pod-level request in its result
// without DeepCopy (`reqs[resourceName] = quantity`), and adding the overhead then mutates that Quantity: for
// one held as an inf.Dec this changes the pod's own spec.resources.requests, so a second call on the same
// object would see the first call's overhead added (a 1n pod-level cpu plus a 2-cpu overhead gives
// 2.000000001 cpu, then 4.000000001). kube-scheduler reads pods decoded from the API server's canonical
// strings, which are int64Amounts (copied by value) unless they carry 19 or more significant digits.
func podRequests(raw json.RawMessage, opts resourcehelper.PodResourcesOptions) (map[string]amount, error) {
	var p v1.Pod
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, err
	}
	return amounts(resourcehelper.PodRequests(&p, opts)), nil
}

func pod(raw json.RawMessage) podResult {
	assigned, err := podRequests(raw, assignedOptions)
	if err != nil {
		return podResult{Err: err.Error()}
	}
	incoming, err := podRequests(raw, incomingOptions)
	if err != nil {
		return podResult{Err: err.Error()}
	}
	return podResult{OK: true, Assigned: assigned, Incoming: incoming}
}

func main() {
	in := json.NewDecoder(bufio.NewReaderSize(os.Stdin, 1<<20))
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	out := json.NewEncoder(w)
	for n := 0; ; n++ {
		var c input
		err := in.Decode(&c)
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "accounting: case %d: %v\n", n, err)
			os.Exit(2)
		}
		switch {
		case c.Q != nil:
			err = out.Encode(quantity(*c.Q))
		case c.Pod != nil:
			err = out.Encode(pod(c.Pod))
		default:
			fmt.Fprintf(os.Stderr, "accounting: case %d has neither \"q\" nor \"pod\"\n", n)
			os.Exit(2)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "accounting: case %d: %v\n", n, err)
			os.Exit(2)
		}
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintf(os.Stderr, "accounting: %v\n", err)
		os.Exit(2)
	}
}
