# vfslab sh --fs ext4
# kernel: 6.12
# attr(1), the attr package's IRIX-style command that xfstests' _require_attrs
# needs: set (from -V and from standard input), get, remove, list in the
# user, trusted and security namespaces, a symlink itself and followed
# (-L), -q, the libattr errors and the usage errors.
_scratch_mkfs >/dev/null; _scratch_mount; cd $SCRATCH_MNT
touch f; ln -s f lnk
attr -s foo -V bar f; echo rc=$?
attr -g foo f; attr -q -g foo f; echo
echo -n stdin | attr -s st f
attr -R -s x -V y f; attr -S -s sx -V z f
attr -l f; attr -q -l f; attr -R -l f; attr -S -l f
attr -r foo f; echo rc=$?; attr -g foo f; echo rc=$?; attr -r foo f; echo rc=$?
attr -s l -V 1 lnk; echo rc=$?; attr -L -s l2 -V 1 lnk; echo rc=$?; attr -l lnk; attr -L -q -l lnk
attr -l nosuch; echo rc=$?
attr -q f; echo rc=$?; attr -V x f; echo rc=$?; attr -V x -g b f; echo rc=$?; attr -V x -s a f; attr -g b f g; echo rc=$?; attr -x f; echo rc=$?; attr -s; echo rc=$?
attr -V x; attr -q f g; attr f -l; attr -- -l f; echo rc=$?
attr -s big -V "$(head -c 70000 /dev/zero | tr '\0' a)" f; echo rc=$?
cd /; _scratch_unmount
