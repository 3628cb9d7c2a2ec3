// Package schedulerperf runs kube-scheduler's own benchmark harness, test/integration/scheduler_perf of
// k8s.io/kubernetes (an in-process kube-apiserver on a fresh etcd, an in-process kube-scheduler, no kubelets),
// on a performance config chosen at run time (-perf-config). It is driven by bench/schedulerPerf.ts
// (`npm run bench -- scheduler-perf`), which writes that config, one workload per process.
//
// With -extender-argv the harness's scheduler calls sandbox-extender, started in cluster mode against the
// harness's API server before each workload runs. How the extender gets credentials: the harness's
// WithPrepareFn hook runs after the API server and the scheduler have started and before the workload's
// first op, with a context that carries the REST config the harness itself uses (tCtx.RESTConfig(): the API
// server's loopback address, its serving CA, the TLS server name of its loopback certificate and the
// loopback bearer token). The hook writes that config as a kubeconfig file (client-go's clientcmd), creates
// the requeue object an installation creates (-requeue-object), starts the extender command with
// `--kubeconfig FILE` appended, and waits until the extender's /readyz answers 200 (its watches listed).
// The extender is stopped (SIGTERM, then SIGKILL after 10 s) when the workload's test ends, before the
// API server.
package schedulerperf

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	_ "k8s.io/component-base/logs/json/register"
	perf "k8s.io/kubernetes/test/integration/scheduler_perf"
	"k8s.io/kubernetes/test/utils/ktesting"
)

var (
	perfConfig      = flag.String("perf-config", "", "the performance config (test cases and workloads, the harness's YAML format); required")
	topic           = flag.String("topic", "misc", "topic name: part of the name of the data items file")
	extenderArgv    = flag.String("extender-argv", "", `JSON array of strings: the command that starts the extender in cluster mode ("--kubeconfig FILE" is appended); empty: no extender`)
	extenderDir     = flag.String("extender-dir", "", "folder of the extender's kubeconfig and log (extender.log); required with -extender-argv")
	extenderReadyz  = flag.String("extender-readyz", "", "URL of the extender's /readyz; required with -extender-argv")
	requeueObject   = flag.String("requeue-object", "kube-system/sandbox-extender-requeue", "NAMESPACE/NAME of the CSIStorageCapacity the extender's requeue writes (empty: none created)")
	extenderTimeout = flag.Duration("extender-ready-timeout", 2*time.Minute, "longest wait for the extender's /readyz")
)

func TestMain(m *testing.M) {
	if err := perf.InitTests(); err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// BenchmarkPerfScheduling runs the workloads of -perf-config that the harness's label filter and -test.bench select.
func BenchmarkPerfScheduling(b *testing.B) {
	if *perfConfig == "" {
		b.Fatal("-perf-config is required")
	}
	var options []perf.SchedulerPerfOption
	if *extenderArgv != "" {
		var argv []string
		if err := json.Unmarshal([]byte(*extenderArgv), &argv); err != nil || len(argv) == 0 {
			b.Fatalf("-extender-argv must be a non-empty JSON array of strings: %q", *extenderArgv)
		}
		if *extenderDir == "" || *extenderReadyz == "" {
			b.Fatal("-extender-argv needs -extender-dir and -extender-readyz")
		}
		options = append(options, perf.WithPrepareFn(func(tCtx ktesting.TContext) error {
			return startExtender(tCtx, argv)
		}))
	}
	perf.RunBenchmarkPerfScheduling(b, *perfConfig, *topic, nil, options...)
}

// startExtender writes the harness's REST config as a kubeconfig, creates the requeue object, starts the
// extender and waits for its /readyz; the test's cleanup stops it.
func startExtender(tCtx ktesting.TContext, argv []string) error {
	if err := os.MkdirAll(*extenderDir, 0o755); err != nil {
		return err
	}
	kubeconfig := filepath.Join(*extenderDir, "kubeconfig")
	if err := writeKubeconfig(tCtx, kubeconfig); err != nil {
		return fmt.Errorf("writing the extender's kubeconfig: %w", err)
	}
	if err := createRequeueObject(tCtx); err != nil {
		return fmt.Errorf("creating the requeue object %s: %w", *requeueObject, err)
	}

	logFile, err := os.OpenFile(filepath.Join(*extenderDir, "extender.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(argv[0], append(argv[1:], "--kubeconfig", kubeconfig)...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return fmt.Errorf("starting %v: %w", argv, err)
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	tCtx.Cleanup(func() {
		p.stop()
		logFile.Close()
	})
	tCtx.Logf("extender started (pid %d): %s --kubeconfig %s", cmd.Process.Pid, strings.Join(argv, " "), kubeconfig)
	return waitReady(p)
}

// process is a started command; done is closed when it has exited (err: how).
type process struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// writeKubeconfig writes the context's REST config (server, CA, TLS server name, token or client
// certificate) as a kubeconfig file.
func writeKubeconfig(tCtx ktesting.TContext, path string) error {
	rc := tCtx.RESTConfig()
	if rc == nil {
		return errors.New("the harness's context carries no REST config")
	}
	caData := rc.CAData
	if len(caData) == 0 && rc.CAFile != "" {
		var err error
		if caData, err = os.ReadFile(rc.CAFile); err != nil {
			return err
		}
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["scheduler-perf"] = &clientcmdapi.Cluster{
		Server:                   rc.Host,
		CertificateAuthorityData: caData,
		TLSServerName:            rc.ServerName,
		InsecureSkipTLSVerify:    rc.Insecure,
	}
	cfg.AuthInfos["scheduler-perf"] = &clientcmdapi.AuthInfo{
		Token:                 rc.BearerToken,
		TokenFile:             rc.BearerTokenFile,
		ClientCertificateData: rc.CertData,
		ClientKeyData:         rc.KeyData,
		ClientCertificate:     rc.CertFile,
		ClientKey:             rc.KeyFile,
	}
	cfg.Contexts["scheduler-perf"] = &clientcmdapi.Context{Cluster: "scheduler-perf", AuthInfo: "scheduler-perf"}
	cfg.CurrentContext = "scheduler-perf"
	return clientcmd.WriteToFile(*cfg, path)
}

// createRequeueObject creates the CSIStorageCapacity the extender's requeue nudge patches (an installation
// creates it; without it the extender logs a 404 at each nudge).
func createRequeueObject(tCtx ktesting.TContext) error {
	if *requeueObject == "" {
		return nil
	}
	namespace, name, ok := strings.Cut(*requeueObject, "/")
	if !ok || namespace == "" || name == "" {
		return fmt.Errorf("-requeue-object must be NAMESPACE/NAME, not %q", *requeueObject)
	}
	obj := &storagev1.CSIStorageCapacity{
		ObjectMeta:       metav1.ObjectMeta{Name: name, Namespace: namespace},
		StorageClassName: name + ".sandbox-extender.io",
	}
	_, err := tCtx.Client().StorageV1().CSIStorageCapacities(namespace).Create(tCtx, obj, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// waitReady polls the extender's /readyz every 100 ms until it answers 200; fails when the process exits
// first or after -extender-ready-timeout.
func waitReady(p *process) error {
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(*extenderTimeout)
	for {
		resp, err := client.Get(*extenderReadyz)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-p.done:
			return fmt.Errorf("the extender exited before it was ready (%v); see %s", p.err, filepath.Join(*extenderDir, "extender.log"))
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the extender was not ready within %s (%s); see %s", *extenderTimeout, *extenderReadyz, filepath.Join(*extenderDir, "extender.log"))
		}
	}
}

// stop sends SIGTERM, waits up to 10 s for the exit, then sends SIGKILL and waits.
func (p *process) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}
