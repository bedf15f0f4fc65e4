package experiments

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/tsim-dev/tsim"
)

// TestReadmePicture: the picture the README shows for its story is the
// latency.png its first command writes (tsim run
// experiments/crack-incident.toml), byte for byte, so that a change to
// the model cannot leave the README showing what tsim no longer does.
// When the model changes on purpose, the test fails and says how to
// draw the picture again.
func TestReadmePicture(t *testing.T) {
	if testing.Short() {
		t.Skip("draws the story's pictures (an hour simulated in three variants)")
	}
	if runtime.GOARCH != "amd64" {
		// Go may fuse a multiply and an add on other architectures
		// (arm64, ppc64, s390x), which moves the last bits of a float.
		t.Skip("the README's picture was drawn on amd64; this is " + runtime.GOARCH)
	}
	t.Parallel()
	e, err := tsim.Load("crack-incident.toml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := tsim.Run(context.Background(), e, tsim.Options{OutputDir: dir, Outputs: tsim.Outputs{PNG: true}}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "crack-incident", "latency.png"))
	if err != nil {
		t.Fatal(err)
	}
	const shown = "../docs/img/crack-incident-latency.png"
	want, err := os.ReadFile(shown)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("docs/img/crack-incident-latency.png, which the README shows, is not what tsim run experiments/crack-incident.toml draws now (%d bytes against %d); if the change is meant, draw it again: go run ./cmd/tsim run experiments/crack-incident.toml && cp out/crack-incident/latency.png docs/img/crack-incident-latency.png, and check the README's words on it", len(got), len(want))
	}
}
