package calibrate

import (
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// decodeText turns a capture's bytes into text: UTF-8 (a byte order mark
// dropped), UTF-16 with a byte order mark (PowerShell's Out-File and
// Notepad's "Unicode"), or, where the bytes are not UTF-8, Windows-1252,
// the code page of relog and typeperf on a Western European Windows. A
// log in another legacy code page (Cyrillic, Chinese) must be saved as
// UTF-8 or UTF-16 first. It returns the text and the encoding's name.
func decodeText(b []byte, file string) (string, string, error) {
	switch {
	case len(b) >= 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf:
		b = b[3:]
	case len(b) >= 2 && (b[0] == 0xff && b[1] == 0xfe || b[0] == 0xfe && b[1] == 0xff):
		le := b[0] == 0xff
		b = b[2:]
		if len(b)%2 != 0 {
			return "", "", fmt.Errorf("%s: UTF-16 text (a byte order mark) of an odd number of bytes: cut short", file)
		}
		u := make([]uint16, len(b)/2)
		for i := range u {
			if le {
				u[i] = uint16(b[2*i]) | uint16(b[2*i+1])<<8
			} else {
				u[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
			}
		}
		name := "UTF-16BE"
		if le {
			name = "UTF-16LE"
		}
		return string(utf16.Decode(u)), name, nil
	}
	if utf8.Valid(b) {
		return string(b), "UTF-8", nil
	}
	var s strings.Builder
	s.Grow(len(b) + len(b)/8)
	for _, c := range b {
		if c >= 0x80 && c < 0xa0 {
			s.WriteRune(cp1252[c-0x80])
		} else {
			s.WriteRune(rune(c))
		}
	}
	return s.String(), "Windows-1252", nil
}

// cp1252 is Windows-1252 from 0x80 to 0x9f (the rest is Latin-1); the five
// undefined bytes are U+FFFD.
var cp1252 = [32]rune{
	'€', '\ufffd', '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', '\ufffd', 'Ž', '\ufffd',
	'\ufffd', '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', '\ufffd', 'ž', 'Ÿ',
}
