// Command factory-oracle computes Talos Image Factory schematic IDs with the
// factory's own code (github.com/siderolabs/image-factory v1.5.0 pkg/schematic, built from v1.4.0 whose pkg/schematic is identical,
// pkg/schematic: Unmarshal, then ID = sha256 of Marshal), and generates a
// deterministic corpus of schematic files to compare fleetc against.
//
//	factory-oracle id FILE...      one line per file:
//	                               FILE<TAB>ok<TAB>ID<TAB>VALIDATE   (VALIDATE: "-" or the Validate(false) error)
//	                               FILE<TAB>refused<TAB>MESSAGE      (Unmarshal or ID failed)
//	factory-oracle canon FILE      the canonical bytes the factory hashes (Marshal)
//	factory-oracle corpus DIR [N] [SEED]   write N (default 1200) schematic files into DIR
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/siderolabs/image-factory/pkg/schematic"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}

	switch os.Args[1] {
	case "id":
		os.Exit(cmdID(os.Args[2:]))
	case "canon":
		if len(os.Args) != 3 {
			usage()
		}

		os.Exit(cmdCanon(os.Args[2]))
	case "corpus":
		if len(os.Args) < 3 {
			usage()
		}

		n, seed := 1200, uint64(20260101)

		if len(os.Args) > 3 {
			v, err := strconv.Atoi(os.Args[3])
			if err != nil {
				usage()
			}

			n = v
		}

		if len(os.Args) > 4 {
			v, err := strconv.ParseUint(os.Args[4], 10, 64)
			if err != nil {
				usage()
			}

			seed = v
		}

		if err := writeCorpus(os.Args[2], n, seed); err != nil {
			fmt.Fprintln(os.Stderr, "factory-oracle:", err)
			os.Exit(2)
		}
	default:
		usage()
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: factory-oracle id FILE... | canon FILE | corpus DIR [N] [SEED]")
	os.Exit(2)
}

func read(path string) ([]byte, error) {
	if path == "-" {
		return io.ReadAll(os.Stdin)
	}

	return os.ReadFile(path)
}

func oneLine(s string) string {
	return strings.NewReplacer("\n", " ", "\r", " ", "\t", " ").Replace(s)
}

// factoryID is exactly what the factory's POST /schematics does before
// storing (internal/frontend/http/configuration.go): Unmarshal, Validate,
// ID. Validate's answer is reported apart: an Enterprise factory accepts
// `owner`, the public one does not.
func factoryID(data []byte) (id string, validate error, err error) {
	s, err := schematic.Unmarshal(data)
	if err != nil {
		return "", nil, err
	}

	id, err = s.ID()
	if err != nil {
		return "", nil, err
	}

	return id, s.Validate(false), nil
}

func cmdID(files []string) int {
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush() //nolint:errcheck

	status := 0

	for _, f := range files {
		data, err := read(f)
		if err != nil {
			fmt.Fprintf(os.Stderr, "factory-oracle: %v\n", err)

			status = 2

			continue
		}

		id, verr, err := factoryID(data)
		if err != nil {
			fmt.Fprintf(w, "%s\trefused\t%s\n", f, oneLine(err.Error()))

			continue
		}

		v := "-"
		if verr != nil {
			v = oneLine(verr.Error())
		}

		fmt.Fprintf(w, "%s\tok\t%s\t%s\n", f, id, v)
	}

	return status
}

func cmdCanon(file string) int {
	data, err := read(file)
	if err != nil {
		fmt.Fprintln(os.Stderr, "factory-oracle:", err)

		return 2
	}

	s, err := schematic.Unmarshal(data)
	if err != nil {
		fmt.Fprintln(os.Stderr, "factory-oracle: refused:", err)

		return 1
	}

	out, err := s.Marshal()
	if err != nil {
		fmt.Fprintln(os.Stderr, "factory-oracle: refused:", err)

		return 1
	}

	_, err = os.Stdout.Write(out)
	if err != nil {
		return 2
	}

	return 0
}
