package input_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tsim-dev/tsim/input"
)

// An experiment that names a file outside its folder is refused, and the
// message names the path, not the file's content.
func ExampleLoad() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	exp := filepath.Join(dir, "shared.toml")
	os.WriteFile(exp, []byte(`[load]
users = 10
[[tier]]
name = "web"
  [[tier.step]]
  wait = "empirical(../../etc/passwd)"
`), 0o644)

	_, err := input.Load(exp, input.Options{})
	fmt.Println(strings.ReplaceAll(err.Error(), dir, "DIR"))
	// Output:
	// DIR/shared.toml:6: tier.web.step.1.wait: bad distribution "empirical(../../etc/passwd)": reading ../../etc/passwd: ../../etc/passwd: outside the experiment's folder DIR/; files an experiment names must be inside it (--allow-outside permits others)
}
