package format

import (
	"strconv"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"
)

// Line numbers for semantic errors. BurntSushi/toml reports positions only
// for syntax errors; MetaData.Keys lists the keys in file order without
// lines. The scan before decoding (scanTOML) records the line of every key
// in that same order, so key ordinal o is on line keyLines[o].
//
// Should the two counts ever differ, a source falls back to finding a
// key's line from prefixes of the file: the number of keys a prefix (of
// whole lines) decodes to grows with its length, and a key was written on
// the line after the longest prefix that parses without it. A binary
// search over prefixes costs a few decodes per reported key, within a
// budget.

// pos is where a setting was written: a source and an indexed TOML key such
// as "tier[1].step[0].cpu" (array elements 0-based).
type pos struct {
	src *source
	key string
}

type source struct {
	name  string
	data  string
	order int  // position in loader.sources: the experiment file is 0
	named bool // read through ReadFile: a file the experiment names, whose text messages must not quote
	md    toml.MetaData

	keyLines []int32        // by scanTOML: the line of each key of md.Keys()
	fixed    map[string]int // lines known directly (syntax errors)

	mu       sync.Mutex     // Scenario may report errors from several goroutines
	ordinals map[string]int // indexed key → position in md.Keys(); nil until needed
	ends     []int          // byte offset after each line
	counts   map[int]int    // lines → keys decoded from that prefix, -1 if it does not parse
	decoded  int            // bytes decoded for line numbers so far
}

func (p *loader) newSource(name string, data []byte) *source {
	s := &source{name: name, data: string(data), order: len(p.sources)}
	p.sources = append(p.sources, s)
	return s
}

// maxLineLookups bounds the decodes one source spends on line numbers, and
// maxLineBytes the bytes they decode together: the parser decodes a few
// MB/s, so a large file with many errors would otherwise spend minutes on
// them. Once the budget is spent, lines are 0 (unknown); the key path
// still says where.
const (
	maxLineLookups = 2000
	maxLineBytes   = 2 << 20
)

// line returns the 1-based line of an indexed key, of its nearest enclosing
// key that has one, or 0.
func (s *source) line(key string) int {
	if l, ok := s.fixed[key]; ok {
		return l
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ordinals == nil {
		s.index()
	}
	for k := key; k != ""; {
		if o, ok := s.ordinals[k]; ok {
			if len(s.keyLines) == len(s.md.Keys()) {
				return int(s.keyLines[o])
			}
			return s.lineOf(o)
		}
		if strings.HasSuffix(k, "]") {
			k = k[:strings.LastIndexByte(k, '[')]
			continue
		}
		i := strings.LastIndexByte(k, '.')
		if i < 0 {
			break
		}
		k = k[:i]
	}
	return 0
}

// index names every key of md.Keys() by its indexed path. Elements of
// arrays of tables are counted by their headers ([[tier]], [[tier.step]]);
// the elements of an inline array of tables all count as element 0, so
// their keys resolve to the array's line.
func (s *source) index() {
	s.ordinals = map[string]int{}
	s.counts = map[int]int{0: 0}
	for i := 0; i < len(s.data); i++ {
		if s.data[i] == '\n' {
			s.ends = append(s.ends, i+1)
		}
	}
	if len(s.ends) == 0 || s.ends[len(s.ends)-1] != len(s.data) {
		s.ends = append(s.ends, len(s.data))
	}
	isArray := func(parts []string) bool {
		t := s.md.Type(parts...)
		return t == "Array" || t == "ArrayHash"
	}
	counters := map[string]int{}
	var b strings.Builder
	for o, k := range s.md.Keys() {
		b.Reset()
		for i, part := range k {
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(part)
			if !isArray(k[:i+1]) {
				continue
			}
			bare := b.String()
			if i == len(k)-1 {
				counters[bare]++
				if _, ok := s.ordinals[bare]; !ok {
					s.ordinals[bare] = o
				}
			}
			b.WriteString("[" + strconv.Itoa(max(counters[bare]-1, 0)) + "]")
		}
		if _, ok := s.ordinals[b.String()]; !ok {
			s.ordinals[b.String()] = o
		}
	}
}

// count returns how many keys the first n lines decode to, or -1 when they
// do not parse (inside a multi-line string or array). spent is true when
// the budget does not allow the decode.
func (s *source) count(n int) (c int, spent bool) {
	if c, ok := s.counts[n]; ok {
		return c, false
	}
	size := s.ends[n-1]
	if len(s.counts) > maxLineLookups || s.decoded+size > maxLineBytes {
		return -1, true
	}
	s.decoded += size
	var m map[string]any
	c = -1
	if md, err := toml.Decode(s.data[:size], &m); err == nil {
		c = len(md.Keys())
	}
	s.counts[n] = c
	return c, false
}

// lineOf finds the line of key ordinal o, or 0 when the budget runs out.
func (s *source) lineOf(o int) int {
	// Invariant: the first lo lines decode to at most o keys (lo = 0: none);
	// the first hi lines hold key o (hi = all lines: the whole file).
	lo, hi := 0, len(s.ends)
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		l := -1
		// The parsing prefix in (lo, hi) nearest to mid.
		for d := 0; l < 0 && (mid+d < hi || mid-d-1 > lo); d++ {
			if mid+d < hi {
				c, spent := s.count(mid + d)
				if spent {
					return 0
				}
				if c >= 0 {
					l = mid + d
					break
				}
			}
			if mid-d-1 > lo {
				c, spent := s.count(mid - d - 1)
				if spent {
					return 0
				}
				if c >= 0 {
					l = mid - d - 1
				}
			}
		}
		if l < 0 {
			break // no prefix between parses: key o starts on line lo+1
		}
		if c, _ := s.count(l); c > o {
			hi = l
		} else {
			lo = l
		}
	}
	return lo + 1
}
