#!/bin/bash
# xfs_io in vfslab's Linux guest: "xfs_io -c 'set_encpolicy ... -s N ...' FILE"
# (the form the prelude's _set_encpolicy uses) runs guest/set_encpolicy.c,
# which has xfsprogs 6.6's -s; everything else is the real xfs_io.
if [ $# -eq 3 ] && [ "$1" = -c ]; then
	case " $2 " in
	" set_encpolicy "*" -s "*)
		# shellcheck disable=SC2086 # the command's words, as xfs_io splits them
		exec /usr/lib/vfslab/set_encpolicy "$3" ${2#set_encpolicy}
		;;
	esac
fi
exec /usr/lib/vfslab/xfs_io "$@"
