package main

import (
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// tickingClock is the scheduling queue's clock: every reading is one microsecond after the previous
// one, so queue timestamps keep the order in which things happened (FIFO among equal priorities, as
// with a real clock) while no wall time enters a recording. Nothing in the recorder waits on it: the
// queue's background flushes are not started (backoff is zero and the leftover flush is never due).
type tickingClock struct {
	mu  sync.Mutex
	now time.Time
}

var _ clock.WithTicker = &tickingClock{}

func newTickingClock(start time.Time) *tickingClock { return &tickingClock{now: start} }

func (c *tickingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(time.Microsecond)
	return c.now
}

func (c *tickingClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

func (c *tickingClock) After(time.Duration) <-chan time.Time { return make(chan time.Time) }

func (c *tickingClock) NewTimer(time.Duration) clock.Timer {
	return &idleTimer{c: make(chan time.Time)}
}

func (c *tickingClock) Sleep(time.Duration) {}

func (c *tickingClock) Tick(time.Duration) <-chan time.Time { return make(chan time.Time) }

func (c *tickingClock) NewTicker(time.Duration) clock.Ticker {
	return &idleTicker{c: make(chan time.Time)}
}

type idleTimer struct{ c chan time.Time }

func (t *idleTimer) C() <-chan time.Time      { return t.c }
func (t *idleTimer) Stop() bool               { return true }
func (t *idleTimer) Reset(time.Duration) bool { return true }

type idleTicker struct{ c chan time.Time }

func (t *idleTicker) C() <-chan time.Time { return t.c }
func (t *idleTicker) Stop()               {}
