package dev.cairn.nfs.rpc;

import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrException;

/** Who sent a call (RFC 5531 §8.2, RFC 5531 Appendix A for AUTH_SYS). */
public sealed interface Credentials {
    int AUTH_NONE = 0;
    int AUTH_SYS = 1;
    /** RFC 5531: the credential body is at most 400 bytes. */
    int MAX_AUTH_BYTES = 400;
    /** AUTH_SYS machine names are at most 255 bytes, supplementary groups at most 16. */
    int MAX_MACHINE_NAME = 255;
    int MAX_GIDS = 16;
    /** uid/gid 65534, what an anonymous or squashed caller becomes. */
    int NOBODY = 65534;

    int uid();

    int gid();

    int[] gids();

    record None() implements Credentials {
        @Override public int uid() { return NOBODY; }
        @Override public int gid() { return NOBODY; }
        @Override public int[] gids() { return new int[0]; }
    }

    record Sys(int stamp, String machine, int uid, int gid, int[] gids) implements Credentials {
        static Sys decode(byte[] body) {
            XdrDecoder d = new XdrDecoder(body);
            int stamp = d.readInt();
            String machine = d.readString(MAX_MACHINE_NAME);
            int uid = d.readInt(), gid = d.readInt();
            int n = d.readLength(MAX_GIDS, "gids");
            int[] gids = new int[n];
            for (int i = 0; i < n; i++) gids[i] = d.readInt();
            if (d.remaining() != 0) throw new XdrException("AUTH_SYS body has " + d.remaining() + " trailing bytes");
            return new Sys(stamp, machine, uid, gid, gids);
        }

        /** The same caller seen through root squash or as anonymous. */
        public Sys as(int newUid, int newGid) { return new Sys(stamp, machine, newUid, newGid, new int[0]); }
    }
}
