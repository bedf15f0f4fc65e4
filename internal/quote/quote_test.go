package quote

import "testing"

func TestExcerpt(t *testing.T) {
	for _, c := range []struct {
		s    string
		max  int
		want string
	}{
		{"web", 10, `"web"`},
		{"abcdef", 3, `"abc"… (6 bytes in all)`},
		{"a\x1b[2Jb", 10, `"a\x1b[2Jb"`},               // a terminal escape, escaped
		{"x\u202ey", 10, `"x\u202ey"`},                 // a bidirectional override
		{"\xff\"q", 10, `"\xff\"q"`},                   // an invalid byte and a quote
		{"é日本", 2, `"é日"… (8 bytes in all)`},           // runes, not bytes
		{"line\nnext\u2028", 20, `"line\nnext\u2028"`}, // line breaks of both kinds
	} {
		if got := Excerpt(c.s, c.max); got != c.want {
			t.Errorf("Excerpt(%q, %d) = %s, want %s", c.s, c.max, got, c.want)
		}
	}
}
