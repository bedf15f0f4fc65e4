package dotnetconfig

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxFileSize is the largest configuration file read. A shipped
// machine.config is about 40 KB; 16 MiB leaves room for any real file and
// keeps a wrong argument (a log, a dump) from being read whole.
const MaxFileSize = 16 << 20

// maxDepth bounds element nesting. Real configuration files nest about a
// dozen levels; the bound keeps pathological input from costing stack.
const maxDepth = 100

// An Element is one XML element of a configuration file, with its line.
type Element struct {
	Name     string // local name, case as written (.NET matches names case-sensitively)
	Attrs    []Attr // in file order; namespace declarations and prefixed attributes left out
	Children []*Element
	Line     int // line of the start tag's '<'
}

// An Attr is one attribute.
type Attr struct {
	Name, Value string
}

// Attr returns the value of the attribute named exactly name.
func (e *Element) Attr(name string) (string, bool) {
	for _, a := range e.Attrs {
		if a.Name == name {
			return a.Value, true
		}
	}
	return "", false
}

// A ConfigError is a problem at a place in a file.
type ConfigError struct {
	File string
	Line int // 0 when the problem is not at a line
	Msg  string
}

func (e *ConfigError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// ReadFile reads a configuration file, refusing one larger than MaxFileSize
// without reading it all.
func ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return nil, &ConfigError{File: path, Msg: "is a directory"}
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileSize {
		return nil, &ConfigError{File: path, Msg: fmt.Sprintf("larger than %d MiB; not a configuration file?", MaxFileSize>>20)}
	}
	return data, nil
}

// Parse parses one configuration file into its root element. name is used
// in messages. The root must be <configuration>.
func Parse(name string, data []byte) (*Element, error) {
	if len(data) > MaxFileSize {
		return nil, &ConfigError{File: name, Msg: fmt.Sprintf("larger than %d MiB; not a configuration file?", MaxFileSize>>20)}
	}
	data, err := toUTF8(data)
	if err != nil {
		return nil, &ConfigError{File: name, Line: 1, Msg: err.Error()}
	}
	d := xml.NewDecoder(bytes.NewReader(data))
	d.CharsetReader = charsetReader
	var root *Element
	var stack []*Element
	for {
		line, _ := d.InputPos()
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, syntaxError(name, line, d, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if len(stack) >= maxDepth {
				return nil, &ConfigError{File: name, Line: line, Msg: fmt.Sprintf("elements nested deeper than %d levels", maxDepth)}
			}
			el := &Element{Name: t.Name.Local, Line: line}
			for _, a := range t.Attr {
				if a.Name.Space != "" || a.Name.Local == "xmlns" {
					continue // xmlns declarations, xdt:Transform and the like
				}
				el.Attrs = append(el.Attrs, Attr{Name: a.Name.Local, Value: a.Value})
			}
			if len(stack) == 0 {
				if root != nil {
					return nil, &ConfigError{File: name, Line: line, Msg: "a second root element"}
				}
				root = el
			} else {
				p := stack[len(stack)-1]
				p.Children = append(p.Children, el)
			}
			stack = append(stack, el)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) == 0 && len(bytes.TrimSpace(t)) > 0 {
				return nil, &ConfigError{File: name, Line: line, Msg: "text outside the root element"}
			}
		}
	}
	if root == nil {
		return nil, &ConfigError{File: name, Msg: "no root element; not an XML configuration file"}
	}
	if root.Name != "configuration" {
		return nil, &ConfigError{File: name, Line: root.Line, Msg: fmt.Sprintf("root element is <%s>, not <configuration>", clip(root.Name))}
	}
	return root, nil
}

// syntaxError turns a decoder error into a file:line error. encoding/xml's
// messages name elements and entities; they are clipped so that a broken
// file cannot make the message repeat much of it.
func syntaxError(name string, line int, d *xml.Decoder, err error) error {
	var se *xml.SyntaxError
	if errors.As(err, &se) {
		return &ConfigError{File: name, Line: se.Line, Msg: "malformed XML: " + clip(se.Msg)}
	}
	if l, _ := d.InputPos(); l > 0 {
		line = l
	}
	return &ConfigError{File: name, Line: line, Msg: "malformed XML: " + clip(err.Error())}
}

// clip shortens s to at most 80 runes of one line.
func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= 80 {
		return s
	}
	r := []rune(s)
	return string(r[:77]) + "..."
}

// toUTF8 strips a UTF-8 byte-order mark and converts UTF-16 (which Windows
// tools sometimes write) to UTF-8.
func toUTF8(b []byte) ([]byte, error) {
	switch {
	case bytes.HasPrefix(b, []byte{0xEF, 0xBB, 0xBF}):
		return b[3:], nil
	case bytes.HasPrefix(b, []byte{0xFF, 0xFE}), bytes.HasPrefix(b, []byte{0xFE, 0xFF}):
		big := b[0] == 0xFE
		b = b[2:]
		if len(b)%2 != 0 {
			return nil, errors.New("UTF-16 file with an odd number of bytes")
		}
		u := make([]uint16, len(b)/2)
		for i := range u {
			if big {
				u[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
			} else {
				u[i] = uint16(b[2*i+1])<<8 | uint16(b[2*i])
			}
		}
		return []byte(string(utf16.Decode(u))), nil
	}
	return b, nil
}

// charsetReader accepts the encodings .NET configuration files declare.
// UTF-16 files were converted by toUTF8 before decoding; Latin-1 and
// Windows-1252 are read as Latin-1, which differs only in characters no
// setting this package reads can contain.
func charsetReader(label string, in io.Reader) (io.Reader, error) {
	switch strings.ToLower(label) {
	case "utf-8", "utf8", "utf-16", "utf16", "unicode", "us-ascii", "ascii":
		return in, nil
	case "iso-8859-1", "latin1", "windows-1252", "cp1252":
		b, err := io.ReadAll(in)
		if err != nil {
			return nil, err
		}
		r := make([]rune, len(b))
		for i, c := range b {
			r[i] = rune(c)
		}
		return strings.NewReader(string(r)), nil
	}
	return nil, fmt.Errorf("unsupported encoding %q", clip(label))
}
