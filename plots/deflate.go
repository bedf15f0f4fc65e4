package plots

import (
	"encoding/binary"
	"math/bits"
	"slices"
)

// A picture's rows are mostly runs of one colour and rows like the one
// above. rowDeflate compresses them with what finds those and nothing
// else: at each byte it tries a copy of the pixel to the left (3 bytes
// back) and of the row above (a row back) and keeps the longer, then codes
// blocks of these with Huffman codes of their own (RFC 1951). It takes
// less than half of compress/flate's BestSpeed time (which hashes every
// position) for files about a fifth larger on plots.
//
// A rowDeflate writes one strip of rows of a picture as a run of DEFLATE
// blocks that ends on a byte boundary, so that the strips of a picture,
// compressed each on its own, concatenate into one DEFLATE stream: a
// strip's first row may copy from the row above, the last of the strip
// before, which the decoder has by then (the picture is at hand, so the
// strip's compressor reads it too).

// rowDeflate is a strip of a DEFLATE stream being written, one row at a
// time.
type rowDeflate struct {
	acc    uint64 // bits not yet in out, the first in the low bits
	nacc   uint
	out    []byte
	stride int // bytes in a row
	// dist are the two distances a match copies from: 3 (the pixel to
	// the left) and stride (the row above; 0 when too far for DEFLATE).
	dist     [2]int
	distSym  [2]uint16
	distXN   [2]uint // extra bits
	distXV   [2]uint64
	tokens   []uint32 // literal bytes, and matches (matchFlag | length<<1 | which dist)
	litFreq  [286]int
	distFreq [30]int
}

const (
	matchFlag   = 1 << 16
	blockTokens = 1 << 15 // tokens coded with one set of Huffman codes
)

// lenSym, lenXN and lenXV are, for each match length 3–258, its length
// symbol (257–285) and extra bits (RFC 1951, 3.2.5).
var lenSym, lenXN, lenXV = func() (sym [259]uint16, xn [259]uint, xv [259]uint64) {
	for l := 3; l <= 258; l++ {
		if l == 258 {
			sym[l] = 285
			continue
		}
		for i := 0; i < 28; i++ {
			e := 0
			base := 3 + i
			if i >= 8 {
				e = i/4 - 1
				base = 3 + (4+i%4)<<e
			}
			if l >= base && l < base+1<<e {
				sym[l], xn[l], xv[l] = uint16(257+i), uint(e), uint64(l-base)
				break
			}
		}
	}
	return
}()

// distCode is distance d's symbol (0–29) and extra bits; d ≤ 32768.
func distCode(d int) (sym uint16, xn uint, xv uint64) {
	for c := 0; c < 30; c++ {
		e, base := 0, c+1
		if c >= 4 {
			e = c/2 - 1
			base = 1 + 1<<(e+1) + (c%2)<<e
		}
		if d >= base && d < base+1<<e {
			return uint16(c), uint(e), uint64(d - base)
		}
	}
	panic("plots: distance beyond DEFLATE's window")
}

func newRowDeflate(stride int) *rowDeflate {
	z := &rowDeflate{stride: stride}
	z.dist[0] = 3
	if stride <= 32768 {
		z.dist[1] = stride
	}
	for k, d := range z.dist {
		if d > 0 {
			z.distSym[k], z.distXN[k], z.distXV[k] = distCode(d)
		}
	}
	return z
}

// reset starts a strip, appended to out.
func (z *rowDeflate) reset(out []byte) {
	z.out, z.acc, z.nacc = out, 0, 0
	if cap(z.tokens) < blockTokens { // writeRow writes six at once in room it has
		z.tokens = make([]uint32, 0, blockTokens)
	}
}

// bits writes the n low bits of b.
func (z *rowDeflate) bits(b uint64, n uint) {
	z.acc |= b << z.nacc
	z.nacc += n
	if z.nacc >= 32 {
		z.out = binary.LittleEndian.AppendUint32(z.out, uint32(z.acc))
		z.acc >>= 32
		z.nacc -= 32
	}
}

// matchLen is how many bytes, up to max, a[i:] and a[j:] have in common:
// 32 bytes at a time, then 8, then one.
func matchLen(a []byte, i, j, max int) int {
	n := 0
	for n+32 <= max {
		p, q := a[i+n:i+n+32:i+n+32], a[j+n:j+n+32:j+n+32]
		x0 := binary.LittleEndian.Uint64(p) ^ binary.LittleEndian.Uint64(q)
		x1 := binary.LittleEndian.Uint64(p[8:]) ^ binary.LittleEndian.Uint64(q[8:])
		x2 := binary.LittleEndian.Uint64(p[16:]) ^ binary.LittleEndian.Uint64(q[16:])
		x3 := binary.LittleEndian.Uint64(p[24:]) ^ binary.LittleEndian.Uint64(q[24:])
		if x0|x1|x2|x3 != 0 {
			break
		}
		n += 32
	}
	for n+8 <= max {
		x := binary.LittleEndian.Uint64(a[i+n:]) ^ binary.LittleEndian.Uint64(a[j+n:])
		if x != 0 {
			return n + bits.TrailingZeros64(x)/8
		}
		n += 8
	}
	for n < max && a[i+n] == a[j+n] {
		n++
	}
	return n
}

// copyStarts has bit 8j+7 set for each j < 6 where bytes j, j+1 and j+2
// of x are zero: where x is two words xored, the bytes at which a copy of
// three or more starts.
func copyStarts(x uint64) uint64 {
	const low7, high = 0x7f7f7f7f_7f7f7f7f, 0x80808080_80808080
	zero := ^((x&low7 + low7) | x | low7) // 0x80 in each zero byte
	return zero & (zero >> 8) & (zero >> 16) & 0x0000_8080_8080_8080
}

// writeRow compresses one row of exactly stride bytes. buf holds the row
// before (stride bytes, or none for the first) followed by this one.
func (z *rowDeflate) writeRow(buf []byte) {
	up := z.dist[1]
	if len(buf) < 2*z.stride {
		up = 0 // the first row
	}
	const three = 0xffffff // a match needs three bytes: look at them before measuring
	for i := len(buf) - z.stride; i < len(buf); {
		// Where neither copy starts at any of the next six bytes (the
		// anti-aliased edges of lines), they are six literals: the
		// tokens the test below, byte by byte, would make.
		if i+8 <= len(buf) && i >= 3 && len(z.tokens)+6 <= blockTokens {
			x := binary.LittleEndian.Uint64(buf[i:])
			starts := copyStarts(x ^ binary.LittleEndian.Uint64(buf[i-3:]))
			if up > 0 {
				starts |= copyStarts(x ^ binary.LittleEndian.Uint64(buf[i-up:]))
			}
			n := 6
			if starts != 0 {
				n = bits.TrailingZeros64(starts) / 8
			}
			t := z.tokens[len(z.tokens) : len(z.tokens)+n]
			for j := range t {
				b := buf[i+j]
				t[j] = uint32(b)
				z.litFreq[b]++
			}
			z.tokens = z.tokens[:len(z.tokens)+n]
			i += n
			if len(z.tokens) == blockTokens {
				z.block(false)
			}
			if n == 6 {
				continue
			}
		}
		rest := min(258, len(buf)-i)
		best, k := 0, 0
		if rest >= 4 && i >= 3 {
			here := binary.LittleEndian.Uint32(buf[i:]) & three
			if here == binary.LittleEndian.Uint32(buf[i-3:])&three {
				best = matchLen(buf, i, i-3, rest)
			}
			if up > 0 && best < rest && here == binary.LittleEndian.Uint32(buf[i-up:])&three {
				if n := matchLen(buf, i, i-up, rest); n > best {
					best, k = n, 1
				}
			}
		} else if rest == 3 && i >= 3 && buf[i] == buf[i-3] && buf[i+1] == buf[i-2] && buf[i+2] == buf[i-1] {
			best = 3
		}
		if best == 0 {
			z.tokens = append(z.tokens, uint32(buf[i]))
			z.litFreq[buf[i]]++
			i++
		} else {
			z.tokens = append(z.tokens, matchFlag|uint32(best)<<1|uint32(k))
			z.litFreq[lenSym[best]]++
			z.distFreq[z.distSym[k]]++
			i += best
		}
		if len(z.tokens) == blockTokens {
			z.block(false)
		}
	}
}

// copyRow compresses a row that is the row above again: copies of the
// row above, 258 bytes at a time (the last two shorter if need be, none
// shorter than three).
func (z *rowDeflate) copyRow() {
	for rest := z.stride; rest > 0; {
		n := min(258, rest)
		if r := rest - n; r > 0 && r < 3 {
			n -= 3 - r
		}
		z.tokens = append(z.tokens, matchFlag|uint32(n)<<1|1)
		z.litFreq[lenSym[n]]++
		z.distFreq[z.distSym[1]]++
		rest -= n
		if len(z.tokens) == blockTokens {
			z.block(false)
		}
	}
}

// clOrder is the order in which the code length code's lengths are sent.
var clOrder = [19]int{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}

// block writes the tokens so far as one block with dynamic Huffman codes.
func (z *rowDeflate) block(final bool) {
	z.litFreq[256]++ // the end of the block
	litLen := huffmanLengths(z.litFreq[:], 15)
	distLen := huffmanLengths(z.distFreq[:], 15)
	nlit, ndist := 286, 30
	for nlit > 257 && litLen[nlit-1] == 0 {
		nlit--
	}
	for ndist > 1 && distLen[ndist-1] == 0 {
		ndist--
	}
	// The code lengths, run-length coded (symbols 0–18, RFC 1951, 3.2.7).
	type clSym struct {
		sym   int
		extra uint64
		n     uint
	}
	var cls []clSym
	var clFreq [19]int
	lens := append(append([]uint8(nil), litLen[:nlit]...), distLen[:ndist]...)
	for i := 0; i < len(lens); {
		l := lens[i]
		run := 1
		for i+run < len(lens) && lens[i+run] == l {
			run++
		}
		switch {
		case l == 0 && run >= 11:
			run = min(run, 138)
			cls = append(cls, clSym{18, uint64(run - 11), 7})
		case l == 0 && run >= 3:
			run = min(run, 10)
			cls = append(cls, clSym{17, uint64(run - 3), 3})
		case l != 0 && run >= 4:
			run = min(run, 7) // the length, then 3–6 repeats
			cls = append(cls, clSym{int(l), 0, 0}, clSym{16, uint64(run - 4), 2})
		default:
			run = 1
			cls = append(cls, clSym{int(l), 0, 0})
		}
		i += run
	}
	for _, c := range cls {
		clFreq[c.sym]++
	}
	clLen := huffmanLengths(clFreq[:], 7)
	ncl := 19
	for ncl > 4 && clLen[clOrder[ncl-1]] == 0 {
		ncl--
	}
	litCode, distCodes, clCode := canonical(litLen), canonical(distLen), canonical(clLen)

	head := uint64(2 << 1) // BTYPE 10: dynamic codes
	if final {
		head |= 1
	}
	z.bits(head, 3)
	z.bits(uint64(nlit-257), 5)
	z.bits(uint64(ndist-1), 5)
	z.bits(uint64(ncl-4), 4)
	for _, s := range clOrder[:ncl] {
		z.bits(uint64(clLen[s]), 3)
	}
	for _, c := range cls {
		z.bits(clCode[c.sym], uint(clLen[c.sym]))
		if c.n > 0 {
			z.bits(c.extra, c.n)
		}
	}
	// The tokens, with the bit buffer in registers: at most 20 bits of a
	// length and 28 of a distance go in before it is emptied to below 32.
	var mcode [2]uint64 // each distance's code and extra bits
	var mn [2]uint
	for k := range z.dist {
		ds := z.distSym[k]
		mcode[k], mn[k] = distCodes[ds]|z.distXV[k]<<distLen[ds], uint(distLen[ds])+z.distXN[k]
	}
	// Each literal's and each length's code (with its extra bits) and
	// how many bits: code | n<<56.
	const codeBits = 1<<56 - 1
	var litTab [256]uint64
	for c := range litTab {
		litTab[c] = litCode[c] | uint64(litLen[c])<<56
	}
	var lenTab [512]uint64 // by length, 3–258
	for l := 3; l <= 258; l++ {
		s := lenSym[l]
		lenTab[l] = (litCode[s] | lenXV[l]<<litLen[s]) | uint64(uint(litLen[s])+lenXN[l])<<56
	}
	// At most 8 bytes a token: written in place, in room made first.
	out := slices.Grow(z.out, 8*len(z.tokens)+8)
	o := len(out)
	out = out[:cap(out)]
	acc, nacc := z.acc, z.nacc
	for _, t := range z.tokens {
		if t&matchFlag == 0 {
			e := litTab[uint8(t)]
			acc |= (e & codeBits) << nacc
			nacc += uint(e >> 56)
		} else {
			e := lenTab[t>>1&511]
			acc |= (e & codeBits) << nacc
			nacc += uint(e >> 56)
			if nacc >= 32 {
				binary.LittleEndian.PutUint32(out[o:], uint32(acc))
				o += 4
				acc >>= 32
				nacc -= 32
			}
			k := t & 1
			acc |= mcode[k] << nacc
			nacc += mn[k]
		}
		if nacc >= 32 {
			binary.LittleEndian.PutUint32(out[o:], uint32(acc))
			o += 4
			acc >>= 32
			nacc -= 32
		}
	}
	z.out = out[:o]
	z.acc, z.nacc = acc, nacc
	z.bits(litCode[256], uint(litLen[256]))
	z.tokens = z.tokens[:0]
	z.litFreq, z.distFreq = [286]int{}, [30]int{}
}

// end writes the strip's last block and ends it on a byte boundary: the
// final block of the stream, or an empty stored block after the last
// (what zlib's sync flush writes), whose length starts on a byte.
func (z *rowDeflate) end(final bool) []byte {
	if len(z.tokens) > 0 || final {
		z.block(final)
	}
	if !final {
		z.bits(0, 3) // not final, BTYPE 00: stored
	}
	for z.nacc > 0 {
		z.out = append(z.out, byte(z.acc))
		z.acc >>= 8
		z.nacc -= min(8, z.nacc)
	}
	if !final {
		z.out = append(z.out, 0, 0, 0xff, 0xff) // LEN 0, NLEN
	}
	return z.out
}

// huffmanLengths returns the code length of each symbol of a Huffman code
// for freq with no code longer than limit; a symbol of zero frequency gets
// none. At least two symbols get a code (a code of one symbol is not
// complete), so two may get one they do not need.
func huffmanLengths(freq []int, limit int) []uint8 {
	f := append([]int(nil), freq...)
	used := 0
	for _, x := range f {
		if x > 0 {
			used++
		}
	}
	for i := 0; used < 2; i++ {
		if f[i] == 0 {
			f[i] = 1
			used++
		}
	}
	for {
		lens := huffman(f)
		if slices.Max(lens) <= uint8(limit) {
			return lens
		}
		// Too deep: flatten the frequencies and build again.
		for i, x := range f {
			if x > 0 {
				f[i] = (x + 1) / 2
			}
		}
	}
}

// huffman returns the Huffman code lengths of freq (zero for the symbols
// of zero frequency), built with two queues over the sorted leaves.
func huffman(freq []int) []uint8 {
	// The leaves by weight, then symbol (the order of a stable sort of
	// them), as weight<<16 | symbol.
	keys := make([]uint64, 0, len(freq))
	for s, w := range freq {
		if w > 0 {
			keys = append(keys, uint64(w)<<16|uint64(s))
		}
	}
	slices.Sort(keys)
	leaves := len(keys)
	// The nodes: the leaves, then the inner nodes in the order they are
	// made (a node after its children).
	w := make([]int, leaves, 2*leaves)
	for i, k := range keys {
		w[i] = int(k >> 16)
	}
	parent := make([]int, 2*leaves)
	li, ii := 0, leaves // next leaf, next inner node
	take := func() int {
		if li < leaves && (ii >= len(w) || w[li] <= w[ii]) {
			li++
			return li - 1
		}
		ii++
		return ii - 1
	}
	for n := 0; n < leaves-1; n++ {
		a, b := take(), take()
		parent[a], parent[b] = len(w), len(w)
		w = append(w, w[a]+w[b])
	}
	// Depths from the root down: a parent comes after its children.
	depth := make([]uint8, len(w))
	for i := len(w) - 2; i >= 0; i-- {
		depth[i] = depth[parent[i]] + 1
	}
	lens := make([]uint8, len(freq))
	for i, k := range keys {
		lens[k&0xffff] = max(depth[i], 1)
	}
	return lens
}

// canonical returns the canonical Huffman codes of lens (RFC 1951, 3.2.2),
// each bit-reversed to be written low bit first.
func canonical(lens []uint8) []uint64 {
	var count [16]int
	for _, l := range lens {
		count[l]++
	}
	count[0] = 0
	var next [16]int
	code := 0
	for b := 1; b < 16; b++ {
		code = (code + count[b-1]) << 1
		next[b] = code
	}
	codes := make([]uint64, len(lens))
	for s, l := range lens {
		if l > 0 {
			codes[s] = uint64(bits.Reverse16(uint16(next[l])) >> (16 - l))
			next[l]++
		}
	}
	return codes
}
