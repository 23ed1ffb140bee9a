// Command gen writes the deploy state machine's definition, as the
// statemachine construct synthesizes it, to
// statemachine/definition/definition.asl.json (make synth).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/ferryhq/ferry/statemachine"
)

func main() {
	out := flag.String("out", "statemachine/definition/definition.asl.json", "file to write the definition to")
	flag.Parse()
	def, err := statemachine.RenderDefinition()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, def, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	fmt.Println("wrote", *out)
}
