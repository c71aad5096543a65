package randgraph

// reader draws choices from the fuzz input; past its end every draw is 0.
type reader struct {
	data []byte
	pos  int
}

func (r *reader) done() bool { return r.pos >= len(r.data) }

func (r *reader) next() int {
	if r.done() {
		return 0
	}
	r.pos++
	return int(r.data[r.pos-1])
}

func (r *reader) intn(n int) int { return r.next() % n }
