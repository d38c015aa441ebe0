// Command fixture-tool stands in for flowstate in the fixture plugin: the
// harness builds it into the scratch plugin's bin/, as it does flowstate, and
// the fixture command's bash blocks call it as a bare command.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "fixture-tool:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	switch {
	case len(args) == 1 && args[0] == "plan":
		fmt.Println("WORKER_COUNT=2")
		fmt.Println("TOPIC_1=Alpha notes")
		fmt.Println("REPORT_PATH_1=out/reports/001_alpha.md")
		fmt.Println("TOPIC_2=Beta notes")
		fmt.Println("REPORT_PATH_2=out/reports/002_beta.md")
		fmt.Println("NEXT=work")
		return nil
	case len(args) == 3 && args[0] == "check":
		want, err := strconv.Atoi(args[2])
		if err != nil {
			return err
		}
		found, _ := filepath.Glob(filepath.Join(args[1], "*.md"))
		if len(found) != want {
			return fmt.Errorf("expected %d reports in %s, found %d", want, args[1], len(found))
		}
		fmt.Printf("FOUND=%d\n", len(found))
		return nil
	}
	return fmt.Errorf("usage: fixture-tool plan | fixture-tool check DIR N")
}
