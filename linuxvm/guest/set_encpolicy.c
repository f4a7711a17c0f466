/*
 * set_encpolicy: xfs_io's "set_encpolicy" command as xfsprogs 6.6 and later
 * have it (with -s LOG2_DUSIZE), for guests whose xfs_io predates the
 * log2_data_unit_size field of struct fscrypt_policy_v2 (Linux 6.7, commit
 * 5b1188847180; Debian 12 ships xfsprogs 6.1). vfslab's Linux oracle
 * (package linuxvm) builds it with the host's C compiler and runs it in
 * place of xfs_io for "set_encpolicy ... -s N" (guest/xfs_io.sh); every
 * other command goes to the real xfs_io.
 *
 * Usage: set_encpolicy FILE [-c mode] [-n mode] [-f flags] [-s log2_dusize]
 *        [-v version] [keyspec]
 *
 * Messages and exit statuses are xfs_io's (io/encrypt.c, set_encpolicy_f).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* include/uapi/linux/fscrypt.h (Linux 6.7+), declared here so that old
 * kernel headers on the host do not matter. */
struct policy_v1 {
	unsigned char version, contents_mode, filenames_mode, flags;
	unsigned char descriptor[8];
};
struct policy_v2 {
	unsigned char version, contents_mode, filenames_mode, flags;
	unsigned char log2_data_unit_size, reserved[3];
	unsigned char identifier[16];
};
#define FS_IOC_SET_ENCRYPTION_POLICY _IOR('f', 19, struct policy_v1)

static const struct {
	unsigned char mode;
	const char *name;
} modes[] = {
	{1, "AES-256-XTS"}, {4, "AES-256-CTS"}, {5, "AES-128-CBC"},
	{6, "AES-128-CTS"}, {9, "Adiantum"}, {10, "AES-256-HCTR2"},
};

static int parse_byte(const char *s, unsigned char *v)
{
	char *end;
	long n = strtol(s, &end, 0);

	if (n < 0 || n > 255 || end == s || *end != '\0')
		return 0;
	*v = (unsigned char)n;
	return 1;
}

static int parse_mode(const char *s, unsigned char *v)
{
	size_t i;

	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (strcmp(s, modes[i].name) == 0) {
			*v = modes[i].mode;
			return 1;
		}
	return parse_byte(s, v);
}

static int hex2bin(const char *hex, unsigned char *bin, size_t n)
{
	if (strlen(hex) != 2 * n)
		return 0;
	for (; n > 0; n--, hex += 2) {
		unsigned int b;

		if (sscanf(hex, "%2x", &b) != 1 || !strchr("0123456789abcdefABCDEF", hex[0]) ||
		    !strchr("0123456789abcdefABCDEF", hex[1]))
			return 0;
		*bin++ = (unsigned char)b;
	}
	return 1;
}

static void usage(void)
{
	fprintf(stderr, "set_encpolicy [-c mode] [-n mode] [-f flags] [-s log2_dusize] [-v version] [keyspec] -- assign an encryption policy to the current file\n");
}

int main(int argc, char **argv)
{
	unsigned char cmode = 1, fmode = 4, flags = 2, du = 0, key[16] = {0};
	int version = -1, c, fd;
	const char *file;
	union {
		unsigned char version;
		struct policy_v1 v1;
		struct policy_v2 v2;
	} p;

	if (argc < 2) {
		usage();
		return 1;
	}
	file = argv[1];
	argv++;
	argc--;
	argv[0] = "set_encpolicy"; /* getopt's messages name the command, as xfs_io's do */
	while ((c = getopt(argc, argv, "c:n:f:s:v:")) != -1) {
		unsigned char v;

		switch (c) {
		case 'c':
		case 'n':
			if (!parse_mode(optarg, c == 'c' ? &cmode : &fmode)) {
				fprintf(stderr, "invalid %s encryption mode: %s\n",
					c == 'c' ? "contents" : "filenames", optarg);
				return 1;
			}
			break;
		case 'f':
			if (!parse_byte(optarg, &flags)) {
				fprintf(stderr, "invalid flags: %s\n", optarg);
				return 1;
			}
			break;
		case 's':
			if (!parse_byte(optarg, &du)) {
				fprintf(stderr, "invalid log2_dusize: %s\n", optarg);
				return 1;
			}
			break;
		case 'v':
			if (!parse_byte(optarg, &v)) {
				fprintf(stderr, "invalid policy version: %s\n", optarg);
				return 1;
			}
			version = v == 1 ? 0 : v; /* "v1" policies are version 0 */
			break;
		default:
			usage();
			return 1;
		}
	}
	if (argc - optind > 1) {
		usage();
		return 1;
	}
	if (argc - optind == 1) {
		const char *s = argv[optind];

		if (version < 0) {
			if (strlen(s) == 16)
				version = 0;
			else if (strlen(s) == 32)
				version = 2;
			else {
				fprintf(stderr, "invalid key specifier: %s\n", s);
				return 1;
			}
		}
		if (!hex2bin(s, key, version == 2 ? 16 : 8)) {
			fprintf(stderr, "invalid key %s: %s\n",
				version == 2 ? "identifier" : "descriptor", s);
			return 1;
		}
	}
	if (version < 0)
		version = 0;
	memset(&p, 0, sizeof(p));
	p.version = (unsigned char)version;
	if (version == 2) {
		p.v2.contents_mode = cmode;
		p.v2.filenames_mode = fmode;
		p.v2.flags = flags;
		p.v2.log2_data_unit_size = du;
		memcpy(p.v2.identifier, key, 16);
	} else {
		if (du != 0) {
			fprintf(stderr, "v1 policy does not support selecting the data unit size\n");
			return 1;
		}
		p.v1.contents_mode = cmode;
		p.v1.filenames_mode = fmode;
		p.v1.flags = flags;
		memcpy(p.v1.descriptor, key, 8);
	}
	fd = open(file, O_RDONLY);
	if (fd < 0) {
		perror(file);
		return 1;
	}
	if (ioctl(fd, FS_IOC_SET_ENCRYPTION_POLICY, &p) < 0) {
		fprintf(stderr, "%s: failed to set encryption policy: %s\n", file, strerror(errno));
		return 1;
	}
	return 0;
}
