package resourcefile

// linearLookupMax is how long a list is searched linearly before indexOf
// builds a map: real files have a handful of keys, hostile ones thousands.
const linearLookupMax = 16

// indexOf finds key among xs (each element's key given by keyOf), keeping
// the first-insertion order Python's dicts have. A short list is searched
// linearly; a long one is indexed once in *index and kept up to date. When
// key is absent it is registered at len(xs), where the caller must append
// it.
func indexOf[T any, K comparable](xs []T, index *map[K]int, key K, keyOf func(T) K) (int, bool) {
	if *index == nil {
		if len(xs) < linearLookupMax {
			for i := range xs {
				if keyOf(xs[i]) == key {
					return i, true
				}
			}
			return 0, false
		}
		*index = make(map[K]int, 2*len(xs))
		for i := range xs {
			(*index)[keyOf(xs[i])] = i
		}
	}
	i, ok := (*index)[key]
	if !ok {
		(*index)[key] = len(xs)
	}
	return i, ok
}
