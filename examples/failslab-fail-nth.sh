# Fault injection through the kernel's own interface
# (Documentation/fault-injection/fault-injection.rst): /proc/self/fail-nth
# fails the Nth slab allocation the task makes from now on, so one mkdir
# fails with ENOMEM; then every allocation point of mkdir in turn, until
# it succeeds. failslab's knobs live in /sys/kernel/debug/failslab.
_scratch_mkfs >/dev/null
_scratch_mount
for f in /sys/kernel/debug/failslab/*; do
	echo "${f##*/}: $(cat $f)"
done
# ignore-gfp-wait (Y at boot) spares every allocation that may sleep in
# reclaim, GFP_KERNEL ones included: turn it off, as the documentation's
# fail-nth example does.
echo N > /sys/kernel/debug/failslab/ignore-gfp-wait
echo 1 > /proc/self/fail-nth
mkdir $SCRATCH_MNT/d
echo "mkdir: status $?, fail-nth now $(cat /proc/self/fail-nth)"
ls $SCRATCH_MNT
dmesg -c
# Fail the 1st, 2nd, ... point until mkdir gets through: a positive
# fail-nth left over means the Nth point was never reached.
n=1
while :; do
	echo $n > /proc/self/fail-nth
	if mkdir $SCRATCH_MNT/e 2>/dev/null; then
		break
	fi
	echo "fail-nth $n: mkdir failed: $(dmesg -c | grep 'Call Trace')"
	n=$((n + 1))
done
echo "fail-nth $n: mkdir succeeded, fail-nth left $(cat /proc/self/fail-nth)"
echo 0 > /proc/self/fail-nth
ls $SCRATCH_MNT
# The probability knob instead: every allocation fails, twice (times 2).
echo 100 > /sys/kernel/debug/failslab/probability
echo 2 > /sys/kernel/debug/failslab/times
echo 0 > /sys/kernel/debug/failslab/verbose
mkdir $SCRATCH_MNT/f
mkdir $SCRATCH_MNT/f
mkdir $SCRATCH_MNT/f && echo "third mkdir: ok, times $(cat /sys/kernel/debug/failslab/times)"
echo bogus > /proc/self/fail-nth
