package kernel

import (
	"strings"
	"testing"
)

// TestWarnLog: WARN and WARN_ON record a warning on the machine, log the
// kernel's WARNING line, count it and taint the machine 'W'; the task
// goes on, and a false WARN_ON records nothing.
func TestWarnLog(t *testing.T) {
	k := New()
	task := k.NewTask("warn")
	task.EnableCounting()
	if task.WarnOn(false, "never") || k.Warnings.Len() != 0 || k.Tainted() != 0 {
		t.Fatalf("false WARN_ON recorded: %d warnings, taint %#x", k.Warnings.Len(), k.Tainted())
	}
	if !task.WarnOn(true, "olen < iname->len") {
		t.Fatal("WARN_ON(true) returned false")
	}
	task.Warn("check_for_stack", "DMA-API: %s %s: device driver maps memory from stack [addr=%016x]", "qce", "qce.0", 0x1234)
	ws := k.Warnings.All()
	if len(ws) != 2 {
		t.Fatalf("%d warnings, want 2", len(ws))
	}
	if ws[0].Msg != "olen < iname->len" || !strings.HasSuffix(ws[0].Func, "TestWarnLog") || ws[0].Task != task.String() {
		t.Errorf("WARN_ON recorded %+v", ws[0])
	}
	want := "WARNING in check_for_stack: DMA-API: qce qce.0: device driver maps memory from stack [addr=0000000000001234]"
	if ws[1].Error() != want {
		t.Errorf("WARN recorded %q, want %q", ws[1].Error(), want)
	}
	if !k.Log.Contains("WARNING: CPU: 0 PID: ") || !k.Log.Contains(" check_for_stack") || !k.Log.Contains("DMA-API: qce qce.0") {
		t.Errorf("log: %q", k.Log.Lines())
	}
	if got := task.Ev.Get(EvWarn); got != 2 {
		t.Errorf("EvWarn = %d, want 2", got)
	}
	if !k.TestTaint(TAINT_WARN) || k.TestTaint(TAINT_DIE) {
		t.Errorf("taint %q, want W only", k.PrintTainted())
	}
}
