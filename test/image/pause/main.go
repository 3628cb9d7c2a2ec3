// Command pause is a pod sandbox's first process, for a node's containerd (sandbox_image): it holds the pod's
// namespaces until the runtime stops it. It blocks until SIGTERM or SIGINT and exits 0; as PID 1 of a pod that
// shares its process namespace it also reaps the children that other containers leave behind (SIGCHLD).
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for s := range signals {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
