package vkxla

import (
	"container/list"
	"crypto/sha256"
	"errors"
	"sync"
)

// compileCache maps module fingerprints to compiled executables, like jax.jit's
// cache: least recently used entries go first once there are more than maxEntries
// or they hold more than maxBytes of device memory. An entry holds one reference to
// its compiled state; every Executable handle holds another.
type compileCache struct {
	mu         sync.Mutex
	maxEntries int
	maxBytes   int64
	bytes      int64
	hits       int
	misses     int
	lru        *list.List // of *cacheEntry, most recent first
	byKey      map[[32]byte]*list.Element
}

type cacheEntry struct {
	key [32]byte
	c   *compiled
}

func newCompileCache(entries int, bytes int64) *compileCache {
	return &compileCache{maxEntries: entries, maxBytes: bytes, lru: list.New(), byKey: map[[32]byte]*list.Element{}}
}

// fingerprint identifies a module's structure (hlo.Fingerprint) and the options
// that shape its code.
func fingerprint(module [32]byte, options string) [32]byte {
	return sha256.Sum256(append(module[:], options...))
}

// getOrCompile returns a new handle on the cached executable for key, compiling and
// caching it on a miss. Compilation runs outside the lock; two racing misses both
// compile and the loser's result is dropped.
func (cc *compileCache) getOrCompile(key [32]byte, compile func() (*compiled, error)) (*Executable, error) {
	if e := cc.lookup(key); e != nil {
		return e, nil
	}
	cc.mu.Lock()
	cc.misses++
	cc.mu.Unlock()
	c, err := compile()
	if err != nil {
		return nil, err
	}
	cc.mu.Lock()
	if el, ok := cc.byKey[key]; ok { // lost a race
		cc.lru.MoveToFront(el)
		winner := el.Value.(*cacheEntry).c
		winner.refs++
		cc.mu.Unlock()
		return winner.handle(), c.release()
	}
	c.refs = 2 // the caller's and the cache's
	cc.byKey[key] = cc.lru.PushFront(&cacheEntry{key: key, c: c})
	cc.bytes += c.stats.PeakBytes
	victims := cc.evictLocked()
	cc.mu.Unlock()
	return c.handle(), releaseAll(victims)
}

func (cc *compileCache) lookup(key [32]byte) *Executable {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	el, ok := cc.byKey[key]
	if !ok {
		return nil
	}
	cc.lru.MoveToFront(el)
	c := el.Value.(*cacheEntry).c
	c.refs++
	cc.hits++
	return c.handle()
}

// evictLocked drops least recently used entries over the bounds (the newest entry
// always stays) and returns the compiled states nobody else holds.
func (cc *compileCache) evictLocked() []*compiled {
	var victims []*compiled
	for cc.lru.Len() > 1 && (cc.lru.Len() > cc.maxEntries || cc.bytes > cc.maxBytes) {
		victims = append(victims, cc.removeLocked(cc.lru.Back())...)
	}
	return victims
}

func (cc *compileCache) removeLocked(el *list.Element) []*compiled {
	e := cc.lru.Remove(el).(*cacheEntry)
	delete(cc.byKey, e.key)
	cc.bytes -= e.c.stats.PeakBytes
	e.c.refs--
	if e.c.refs == 0 {
		return []*compiled{e.c}
	}
	return nil
}

// unref drops a caller's reference, releasing the state when it was the last.
func (cc *compileCache) unref(c *compiled) error {
	cc.mu.Lock()
	c.refs--
	last := c.refs == 0
	cc.mu.Unlock()
	if last {
		return c.release()
	}
	return nil
}

// dropUnheld drops cached entries that no caller holds, least recently used first,
// until they held at least need bytes (or none is left), and releases them: Compile
// makes room with it before failing for lack of device memory.
func (cc *compileCache) dropUnheld(need int64) error {
	cc.mu.Lock()
	var victims []*compiled
	var freed int64
	for el := cc.lru.Back(); el != nil && freed < need; {
		prev := el.Prev()
		if c := el.Value.(*cacheEntry).c; c.refs == 1 {
			freed += c.stats.PeakBytes
			victims = append(victims, cc.removeLocked(el)...)
		}
		el = prev
	}
	cc.mu.Unlock()
	return releaseAll(victims)
}

// clear drops every entry.
func (cc *compileCache) clear() error {
	cc.mu.Lock()
	var victims []*compiled
	for cc.lru.Len() > 0 {
		victims = append(victims, cc.removeLocked(cc.lru.Back())...)
	}
	cc.mu.Unlock()
	return releaseAll(victims)
}

// CacheStats describes the compilation cache.
type CacheStats struct {
	Entries      int
	Bytes        int64 // device memory held by cached executables
	Hits, Misses int
}

func (cc *compileCache) stats() CacheStats {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return CacheStats{Entries: cc.lru.Len(), Bytes: cc.bytes, Hits: cc.hits, Misses: cc.misses}
}

func releaseAll(cs []*compiled) error {
	var errs []error
	for _, c := range cs {
		errs = append(errs, c.release())
	}
	return errors.Join(errs...)
}
