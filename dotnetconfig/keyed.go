package dotnetconfig

// keyed is a configuration collection merged as System.Configuration merges
// one: <add> of a key already present replaces it (and moves it to the
// end), <remove> drops it, <clear/> drops all. Each operation is O(1) (a
// clear is paid for by the adds it drops), so a file of 20,000 entries
// merges in linear time.
type keyed[T any] struct {
	items []keyedItem[T] // in order of addition; removed ones are tombstoned
	index map[string]int // key → its live item
	live  int
}

type keyedItem[T any] struct {
	v    T
	dead bool
}

// add puts v under key, replacing an item of the same key.
func (k *keyed[T]) add(key string, v T) {
	if k.index == nil {
		k.index = map[string]int{}
	}
	k.remove(key)
	k.index[key] = len(k.items)
	k.items = append(k.items, keyedItem[T]{v: v})
	k.live++
}

// remove drops the item of key, and reports whether there was one.
func (k *keyed[T]) remove(key string) bool {
	i, ok := k.index[key]
	if !ok {
		return false
	}
	k.items[i].dead = true
	delete(k.index, key)
	k.live--
	return true
}

// clear drops every item.
func (k *keyed[T]) clear() {
	k.items, k.index, k.live = nil, nil, 0
}

// len is the number of live items.
func (k *keyed[T]) len() int { return k.live }

// list returns the live items in order.
func (k *keyed[T]) list() []T {
	out := make([]T, 0, k.live)
	for _, it := range k.items {
		if !it.dead {
			out = append(out, it.v)
		}
	}
	return out
}
