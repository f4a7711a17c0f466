package vfs

// SetTestHookStep installs fn to run after each intermediate component of
// every path walk (nil removes it); it gets whether the walk is in RCU mode.
func SetTestHookStep(fn func(rcu bool)) {
	if fn == nil {
		testHookStep = nil
		return
	}
	testHookStep = func(nd *nameidata) { fn(nd.rcu()) }
}
