// Command buildfake builds the tests' fake libnvidia-ml.so.1 into a
// directory, for a run by hand or bench/gpu-check.sh's dry run:
//
//	go run ./internal/fakenvml/buildfake DIR
//	LD_LIBRARY_PATH=DIR FAKE_NVML_CONFIG=gpus.toml fgtop snapshot --devices nvml
package main

import (
	"fmt"
	"os"

	"github.com/fgtop/fgtop/internal/fakenvml"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: buildfake DIR")
		os.Exit(2)
	}
	if err := os.MkdirAll(os.Args[1], 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "buildfake:", err)
		os.Exit(1)
	}
	if err := fakenvml.Compile(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "buildfake:", err)
		os.Exit(1)
	}
	fmt.Println(os.Args[1] + "/" + fakenvml.LibName)
}
