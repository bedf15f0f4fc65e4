package format

import "fmt"

// A cheap scan of TOML text before it reaches the parser. BurntSushi/toml
// is superlinear in nesting: 1,000 nested inline tables (4 KB) take 0.2 s
// and 117 MB, 3,000 (12 KB) 5 s and 1 GB; a dotted key of 10,000 parts
// (20 KB) takes 8.6 s and 3.8 GB, a table header of 30,000 parts 12 s and
// 11 GB. It is near-linear but slow in the number of keys and tables
// (300,000 table headers, 2.9 MB: 7 s). The scan refuses, in one pass and
// without allocating per byte, what would cost that much: nesting deeper
// than MaxDepth, more than MaxKeys keys, NUL bytes.
//
// The scan follows TOML's lexical rules only as far as it must to count
// right: strings (basic, literal, multi-line; escapes in basic ones),
// comments, table headers, keys and values, and brackets. It does not
// validate; the parser does that. Where the text is not valid TOML the
// count may be off, but the parser stops at the first error, so it never
// reaches what the scan might have missed after it.

// nestingLevel of a key is the number of tables and arrays it sits in,
// counting each part of a dotted key or table header as a table: in
//
//	[tier.step]            level 2
//	retry.backoff = "1ms"  level 4
//	x = {a = [[1]]}        x level 1, a 2, the inner array 4
type scanError struct {
	line int
	msg  string
}

// scanTOML checks data against maxDepth and maxKeys. It returns the line
// and a message for the first limit exceeded, or ok.
//
// When keyLines is not nil, scanTOML appends to it the line of every key
// and table header, in file order: for valid TOML that is the order of
// toml.MetaData.Keys, which appends one key per header and one per
// "key =", top-level or inside an inline table, as the parser meets them.
// The loader's line numbers come from it (see source.line).
func scanTOML(data string, maxDepth, maxKeys int, keyLines *[]int32) (se scanError, ok bool) {
	type frame struct {
		table bool // '{': keys inside; '[': values
		level int  // the level of the key (or element) this container is
	}
	var stack []frame
	line := 1
	header := 0   // parts of the current [table] header
	keys := 0     // keys and table headers so far
	inKey := true // at a key (line start at the top, after '{' or ',' in an inline table)
	parts := 1    // parts of the key being read
	valLevel := 0 // the level of the value being read (its key's level)
	lineStart := true
	fail := func(msg string) (scanError, bool) { return scanError{line, msg}, false }

	// base is the level keys are relative to in the current context.
	base := func() int {
		if len(stack) == 0 {
			return header
		}
		return stack[len(stack)-1].level
	}

	n := len(data)
	for i := 0; i < n; i++ {
		c := data[i]
		switch c {
		case 0:
			return fail("the file contains a NUL byte; a TOML file is text")
		case '\n':
			line++
			if len(stack) == 0 {
				inKey, parts, lineStart = true, 1, true
			}
			continue
		case ' ', '\t', '\r':
			continue
		case '#':
			for i+1 < n && data[i+1] != '\n' {
				i++
				if data[i] == 0 {
					return fail("the file contains a NUL byte; a TOML file is text")
				}
			}
			continue
		case '"', '\'':
			end, nl, nul := skipString(data, i)
			if nul {
				return fail("the file contains a NUL byte; a TOML file is text")
			}
			line += nl
			i = end - 1
			lineStart = false
			continue
		}
		if lineStart && len(stack) == 0 && c == '[' {
			// A table header: [a.b] or [[a.b]].
			lineStart = false
			keys++
			if keyLines != nil {
				*keyLines = append(*keyLines, int32(line))
			}
			if keys > maxKeys {
				return fail(fmt.Sprintf("more than %d keys and tables; an experiment needs far fewer", maxKeys))
			}
			header = 1
			for i++; i < n && data[i] != '\n'; i++ {
				switch data[i] {
				case '.':
					header++
					if header > maxDepth {
						return fail(fmt.Sprintf("a table header of more than %d parts; an experiment needs at most a few", maxDepth))
					}
				case '"', '\'':
					end, nl, nul := skipString(data, i)
					if nul {
						return fail("the file contains a NUL byte; a TOML file is text")
					}
					line += nl
					i = end - 1
				case ']':
					if i+1 < n && data[i+1] == ']' {
						i++
					}
					goto headerDone
				case 0:
					return fail("the file contains a NUL byte; a TOML file is text")
				}
			}
			i-- // let the newline be counted
		headerDone:
			inKey = false // only a comment may follow on the line
			continue
		}
		lineStart = false
		if inKey {
			switch c {
			case '.':
				parts++
				if base()+parts > maxDepth {
					return fail(fmt.Sprintf("nesting deeper than %d levels (tables, arrays and dotted keys); an experiment needs at most a few", maxDepth))
				}
			case '=':
				keys++
				if keyLines != nil {
					*keyLines = append(*keyLines, int32(line))
				}
				if keys > maxKeys {
					return fail(fmt.Sprintf("more than %d keys and tables; an experiment needs far fewer", maxKeys))
				}
				valLevel = base() + parts
				if valLevel > maxDepth {
					return fail(fmt.Sprintf("nesting deeper than %d levels (tables, arrays and dotted keys); an experiment needs at most a few", maxDepth))
				}
				inKey, parts = false, 1
			case '}':
				if len(stack) > 0 {
					stack = stack[:len(stack)-1]
				}
				inKey = false // after an empty inline table, or a trailing comma
			}
			continue
		}
		// In a value.
		switch c {
		case '[', '{':
			level := valLevel
			if len(stack) > 0 && !stack[len(stack)-1].table {
				level = stack[len(stack)-1].level + 1 // an element of an array
			}
			if level > maxDepth {
				return fail(fmt.Sprintf("nesting deeper than %d levels (tables, arrays and dotted keys); an experiment needs at most a few", maxDepth))
			}
			stack = append(stack, frame{table: c == '{', level: level})
			if c == '{' {
				inKey, parts = true, 1
			}
		case ']', '}':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case ',':
			if len(stack) > 0 && stack[len(stack)-1].table {
				inKey, parts = true, 1
			}
		}
	}
	return scanError{}, true
}

// skipString returns the index after the string that starts at data[i]
// (a quote), the newlines inside it, and whether it holds a NUL byte. An
// unterminated single-line string ends at the newline (the parser rejects
// it).
func skipString(data string, i int) (end, newlines int, nul bool) {
	q := data[i]
	n := len(data)
	if i+2 < n && data[i+1] == q && data[i+2] == q {
		// Multi-line: ends at the first unescaped run of three quotes (a run
		// of up to five ends the string, the extra ones being content).
		for j := i + 3; j < n; j++ {
			switch data[j] {
			case 0:
				return j, newlines, true
			case '\n':
				newlines++
			case '\\':
				if q == '"' {
					if j+1 < n && data[j+1] == '\n' {
						newlines++
					}
					if j+1 < n && data[j+1] == 0 {
						return j, newlines, true
					}
					j++
				}
			case q:
				if j+2 < n && data[j+1] == q && data[j+2] == q {
					k := j + 3
					for x := 0; x < 2 && k < n && data[k] == q; x++ {
						k++
					}
					return k, newlines, false
				}
			}
		}
		return n, newlines, false
	}
	if i+1 < n && data[i+1] == q {
		return i + 2, 0, false // empty string
	}
	for j := i + 1; j < n; j++ {
		switch data[j] {
		case 0:
			return j, 0, true
		case '\n':
			return j, 0, false
		case '\\':
			if q == '"' {
				if j+1 < n && data[j+1] == '\n' {
					return j + 1, 0, false
				}
				j++
			}
		case q:
			return j + 1, 0, false
		}
	}
	return n, 0, false
}

// ScanTOML checks TOML text against MaxDepth and MaxKeys before a parser
// sees it, as LoadExperiment does, for the other TOML files tsim reads (a
// fit specification); the error names the line.
func ScanTOML(data []byte) (line int, err error) {
	if se, ok := scanTOML(string(data), MaxDepth, MaxKeys, nil); !ok {
		return se.line, fmt.Errorf("%s", se.msg)
	}
	return 0, nil
}
