package dotnetconfig

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/ianaindex"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
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

// toUTF8 turns a file into UTF-8 before the XML decoder reads it: a
// byte-order mark (UTF-8, UTF-16 or UTF-32) decides the encoding, and so
// does UTF-16 without one, which XML's autodetection tells from the first
// characters "<?" (XML 1.0, appendix F). Windows tools write UTF-16 with a
// mark; a file of another charset declares it and charsetReader decodes it.
func toUTF8(b []byte) ([]byte, error) {
	var dec transform.Transformer
	switch {
	case bytes.HasPrefix(b, []byte{0x3C, 0x00, 0x3F, 0x00}):
		dec = unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM).NewDecoder()
	case bytes.HasPrefix(b, []byte{0x00, 0x3C, 0x00, 0x3F}):
		dec = unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM).NewDecoder()
	default:
		dec = unicode.BOMOverride(transform.Nop)
	}
	out, _, err := transform.Bytes(dec, b)
	if err != nil {
		return nil, fmt.Errorf("cannot decode the file: %s", clip(err.Error()))
	}
	return out, nil
}

// charsetReader decodes the charset a file declares in its XML
// declaration, by its IANA name (golang.org/x/text). The UTF-8 and UTF-16
// families need nothing: toUTF8 has already made the bytes UTF-8.
func charsetReader(label string, in io.Reader) (io.Reader, error) {
	l := strings.ToLower(strings.TrimSpace(label))
	if l == "utf-8" || l == "utf8" || strings.HasPrefix(l, "utf-16") || strings.HasPrefix(l, "utf16") || l == "unicode" ||
		strings.HasPrefix(l, "utf-32") || l == "us-ascii" || l == "ascii" {
		return in, nil
	}
	e, err := ianaindex.IANA.Encoding(l)
	if err != nil || e == nil {
		return nil, fmt.Errorf("unsupported encoding %q", clip(label))
	}
	return e.NewDecoder().Reader(in), nil
}
