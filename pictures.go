package tsim

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tsim-dev/tsim/plots"
)

// The pictures of the commands other than run (explain's breakdown, plan,
// validate's counters, calibration, fit) are written here, in the formats
// the Output was given (SetFormats: tsim's --format), as tsim run writes
// its own (package report): every picture drawn in every format before any
// file is written, each file whole or not at all, and the files of the
// same pictures that this command did not write again (another format,
// a page beyond the last) removed, so that no stale picture outlives the
// command it came from.

// file is one file to write.
type file struct {
	name string
	data []byte
}

// picture is one picture of a command, drawn in pages (nil: not drawn;
// the first page is stem, the next stem-2, ...).
type picture struct {
	stem  string
	pages []*plots.Figure
}

// formatsOf is the formats of out's pictures.
func (o *Output) formatsOf() []plots.Format {
	if len(o.formats) == 0 {
		return []plots.Format{plots.PNG}
	}
	return o.formats
}

// render draws pics in out's formats: stem.png, stem.svg, ..., then
// stem-2.png, ... for the further pages.
func (o *Output) render(pics ...picture) ([]file, error) {
	var out []file
	for _, p := range pics {
		for i, fig := range p.pages {
			for _, f := range o.formatsOf() {
				name := plots.FileName(plots.PageStem(p.stem, i), f)
				var b bytes.Buffer
				if err := fig.Write(&b, f); err != nil {
					return nil, fmt.Errorf("%s: %w", name, err)
				}
				out = append(out, file{name, b.Bytes()})
			}
		}
	}
	return out, nil
}

// write writes files into out, in order, and returns their names.
func (o *Output) write(files []file) (written []string, err error) {
	for _, f := range files {
		if err := o.WriteFile(f.name, f.data); err != nil {
			return written, err
		}
		written = append(written, f.name)
	}
	return written, nil
}

// removeStale removes the pictures of stems in any format (stem.png,
// stem-2.svg, ...) that are not among written.
func (o *Output) removeStale(stems []string, written []string) error {
	entries, err := o.d.Entries()
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || slices.Contains(written, name) || !isPicture(name, stems) {
			continue
		}
		if err := o.d.Remove(name); err != nil {
			return err
		}
	}
	return nil
}

// isPicture reports whether name is a page of a picture of stems in a
// format tsim writes: stem.EXT, or stem-N.EXT with N a number from 2.
func isPicture(name string, stems []string) bool {
	ext := filepath.Ext(name)
	if !slices.Contains(plots.Formats, plots.Format(strings.TrimPrefix(ext, "."))) {
		return false
	}
	base := strings.TrimSuffix(name, ext)
	for _, s := range stems {
		if base == s {
			return true
		}
		n, ok := strings.CutPrefix(base, s+"-")
		if ok && n != "" && n[0] != '0' && strings.Trim(n, "0123456789") == "" {
			return true
		}
	}
	return false
}

// writePictures draws pics in out's formats, writes them, and removes the
// stale files of the same pictures; it returns the names written.
func writePictures(out *Output, pics ...picture) (written []string, err error) {
	files, err := out.render(pics...)
	if err != nil {
		return nil, err
	}
	if written, err = out.write(files); err != nil {
		return written, err
	}
	var stems []string
	for _, p := range pics {
		stems = append(stems, p.stem)
	}
	return written, out.removeStale(stems, written)
}
