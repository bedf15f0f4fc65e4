package topologies

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

//go:embed *.toml
var files embed.FS

// Get returns the TOML text of the named topology ("three-tier").
func Get(name string) ([]byte, error) {
	if name == "" || strings.ContainsAny(name, `/\.`) {
		return nil, fmt.Errorf("topologies: bad name %q", name)
	}
	b, err := files.ReadFile(name + ".toml")
	if err != nil {
		return nil, fmt.Errorf("topologies: no topology %q", name)
	}
	return b, nil
}

// Names returns the names of all topologies, sorted.
func Names() []string {
	ents, err := fs.ReadDir(files, ".")
	if err != nil {
		panic(err) // the embedded directory is always readable
	}
	var names []string
	for _, e := range ents {
		if n, ok := strings.CutSuffix(e.Name(), ".toml"); ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}
