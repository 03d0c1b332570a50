"""pcap_check.py FILE T0 — prints a pcap file of raw IP packets (skboutput's) a line a packet:
its IP version and protocol, whether the captured, original and IP lengths agree, a UDP
payload, and whether its time is within 30 s of T0 (seconds since the epoch). Written from the
pcap format (the libpcap file header and per-packet records), not with libpcap, so that it checks
what dwarftrace wrote with libpcap on its own terms."""
import struct
import sys

d = open(sys.argv[1], 'rb').read()
t0 = int(sys.argv[2])
magic, vmaj, vmin, _tz, _sig, snap, linktype = struct.unpack('<IHHiIII', d[:24])
print('header', hex(magic), vmaj, vmin, snap, linktype)
o = 24
while o + 16 <= len(d):
    ts, _us, caplen, length = struct.unpack('<IIII', d[o:o + 16])
    p = d[o + 16:o + 16 + caplen]
    o += 16 + caplen
    ip_len = struct.unpack('>H', p[2:4])[0] if len(p) >= 4 else -1
    payload = p[28:].decode(errors='replace') if len(p) > 9 and p[9] == 17 else ''
    print('packet ipv%d proto %d len %s %s %s' % (
        p[0] >> 4, p[9] if len(p) > 9 else -1,
        'ok' if caplen == length == ip_len else 'WRONG', payload,
        'time ok' if abs(ts - t0) < 30 else 'time WRONG'))
if o != len(d):
    print('trailing bytes', len(d) - o)
