package hlo

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// A second registration of a name fails with ErrDuplicateCustomCall, naming it,
// and the first registration stays.
func TestRegisterCustomCallTwice(t *testing.T) {
	first := CustomCallTarget{Name: "test.twice", Summary: "first", Expand: expandIdentity}
	if err := RegisterCustomCall(first); err != nil {
		t.Fatal(err)
	}
	second := first
	second.Summary = "second"
	err := RegisterCustomCall(second)
	if !errors.Is(err, ErrDuplicateCustomCall) || !strings.Contains(err.Error(), `"test.twice"`) {
		t.Fatalf("second registration: %v, want ErrDuplicateCustomCall naming the target", err)
	}
	if got, _ := LookupCustomCall("test.twice"); got.Summary != "first" {
		t.Fatalf("registered: %q, want the first registration", got.Summary)
	}
	if err := RegisterIdentityTarget("test.twice"); !errors.Is(err, ErrDuplicateCustomCall) {
		t.Fatalf("identity over a decomposition: %v, want ErrDuplicateCustomCall", err)
	}
}

// Many goroutines registering the same identity target all succeed (the lookup
// and the insertion were two critical sections: the losers of the race got
// "already registered"), and many registering one decomposition name get
// exactly one success. Run with -race.
func TestRegisterCustomCallConcurrently(t *testing.T) {
	const goroutines = 16
	for round := range 20 {
		identity := fmt.Sprintf("test.concurrent_identity_%d", round)
		plain := fmt.Sprintf("test.concurrent_%d", round)
		errs := make([]error, 2*goroutines)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range goroutines {
			wg.Add(2)
			go func() {
				defer wg.Done()
				<-start
				errs[i] = RegisterIdentityTarget(identity)
			}()
			go func() {
				defer wg.Done()
				<-start
				errs[goroutines+i] = RegisterCustomCall(CustomCallTarget{Name: plain, Expand: expandIdentity})
				_, _ = LookupCustomCall(plain)
				_ = CustomCallTargets()
			}()
		}
		close(start)
		wg.Wait()
		for i, err := range errs[:goroutines] {
			if err != nil {
				t.Fatalf("round %d: RegisterIdentityTarget in goroutine %d: %v", round, i, err)
			}
		}
		ok := 0
		for _, err := range errs[goroutines:] {
			switch {
			case err == nil:
				ok++
			case !errors.Is(err, ErrDuplicateCustomCall):
				t.Fatalf("round %d: %v, want nil or ErrDuplicateCustomCall", round, err)
			}
		}
		if ok != 1 {
			t.Fatalf("round %d: %d registrations of one name succeeded, want 1", round, ok)
		}
	}
}
