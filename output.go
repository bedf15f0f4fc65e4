package tsim

import (
	"github.com/tsim-dev/tsim/internal/atomicio"
	"github.com/tsim-dev/tsim/plots"
)

// Output is an output directory this process owns until Close: every
// file a command writes goes through one. It is root/name, where root is
// the folder the user named (created if needed) and name a directory of
// tsim's own below it, which must be absent or a real directory, never a
// symbolic link; it is locked against other tsim processes, and each file
// is written whole or not at all, never over anything but a regular file
// (see package internal/atomicio).
//
// The pattern every command follows: the library call returns a value
// with WriteText, for what is printed, and WriteFiles(*Output), for what
// is written; the command opens the Output, calls both and closes it.
type Output struct {
	d *atomicio.Dir
	// formats are the pictures' formats (SetFormats); none is PNG alone.
	formats []plots.Format
}

// OpenOutput takes the output directory root/name for this process.
func OpenOutput(root, name string) (*Output, error) {
	d, err := atomicio.Lock(root, name)
	if err != nil {
		return nil, err
	}
	return &Output{d: d}, nil
}

// Path is the directory's path, root/name.
func (o *Output) Path() string { return o.d.Path }

// WriteFile writes data as the file name of the directory, whole or not
// at all.
func (o *Output) WriteFile(name string, data []byte) error { return o.d.WriteFile(name, data) }

// SetFormats chooses the formats the pictures written into the
// directory take, a list such as "png,svg,pdf" (--format; see
// CheckFormats); without it they are PNG.
func (o *Output) SetFormats(s string) error {
	f, err := plots.ParseFormats(s)
	if err != nil {
		return err
	}
	o.formats = f
	return nil
}

// Close releases the directory.
func (o *Output) Close() { o.d.Unlock() }

// WriteFile writes data as the file at path, whole or not at all, into a
// folder that must exist; what is at path must be absent or a regular
// file (tsim config -o).
func WriteFile(path string, data []byte) error { return atomicio.WriteFile(path, data) }
