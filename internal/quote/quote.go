// Package quote quotes what tsim read from a user's file in its
// messages: a short excerpt, never the whole field of a hostile file.
package quote

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Excerpt quotes at most max runes of s for a message: control
// characters, bidirectional overrides and invalid bytes escaped, the rest
// elided with its length ("… (123456 bytes in all)"), so that no message
// carries a whole field of a hostile file or rewrites the terminal.
func Excerpt(s string, max int) string {
	var b strings.Builder
	b.WriteByte('"')
	n := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if n == max {
			fmt.Fprintf(&b, `"… (%d bytes in all)`, len(s))
			return b.String()
		}
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '"':
			b.WriteString(`\"`)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0x2028 || r == 0x2029 || r == 0x202e || r == 0xfeff:
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
		i += size
		n++
	}
	b.WriteByte('"')
	return b.String()
}
