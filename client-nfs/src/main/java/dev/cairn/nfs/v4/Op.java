package dev.cairn.nfs.v4;

/** nfs_opnum4 (RFC 7530 §16, RFC 8881 §18, RFC 7862 for 4.2's numbers). */
public final class Op {
    public static final int ACCESS = 3;
    public static final int CLOSE = 4;
    public static final int COMMIT = 5;
    public static final int CREATE = 6;
    public static final int DELEGPURGE = 7;
    public static final int DELEGRETURN = 8;
    public static final int GETATTR = 9;
    public static final int GETFH = 10;
    public static final int LINK = 11;
    public static final int LOCK = 12;
    public static final int LOCKT = 13;
    public static final int LOCKU = 14;
    public static final int LOOKUP = 15;
    public static final int LOOKUPP = 16;
    public static final int NVERIFY = 17;
    public static final int OPEN = 18;
    public static final int OPENATTR = 19;
    public static final int OPEN_CONFIRM = 20;
    public static final int OPEN_DOWNGRADE = 21;
    public static final int PUTFH = 22;
    public static final int PUTPUBFH = 23;
    public static final int PUTROOTFH = 24;
    public static final int READ = 25;
    public static final int READDIR = 26;
    public static final int READLINK = 27;
    public static final int REMOVE = 28;
    public static final int RENAME = 29;
    public static final int RENEW = 30;
    public static final int RESTOREFH = 31;
    public static final int SAVEFH = 32;
    public static final int SECINFO = 33;
    public static final int SETATTR = 34;
    public static final int SETCLIENTID = 35;
    public static final int SETCLIENTID_CONFIRM = 36;
    public static final int VERIFY = 37;
    public static final int WRITE = 38;
    public static final int RELEASE_LOCKOWNER = 39;
    public static final int BACKCHANNEL_CTL = 40;
    public static final int BIND_CONN_TO_SESSION = 41;
    public static final int EXCHANGE_ID = 42;
    public static final int CREATE_SESSION = 43;
    public static final int DESTROY_SESSION = 44;
    public static final int FREE_STATEID = 45;
    public static final int GET_DIR_DELEGATION = 46;
    public static final int GETDEVICEINFO = 47;
    public static final int GETDEVICELIST = 48;
    public static final int LAYOUTCOMMIT = 49;
    public static final int LAYOUTGET = 50;
    public static final int LAYOUTRETURN = 51;
    public static final int SECINFO_NO_NAME = 52;
    public static final int SEQUENCE = 53;
    public static final int SET_SSV = 54;
    public static final int TEST_STATEID = 55;
    public static final int WANT_DELEGATION = 56;
    public static final int DESTROY_CLIENTID = 57;
    public static final int RECLAIM_COMPLETE = 58;
    /** The highest operation number of minor version 1. */
    public static final int LAST_V41 = RECLAIM_COMPLETE;
    // minor version 2 (RFC 7862 §15): every one of its operations is OPTIONAL; Cairn serves SEEK, READ_PLUS and DEALLOCATE and answers the others NOTSUPP
    public static final int ALLOCATE = 59;
    public static final int COPY = 60;
    public static final int COPY_NOTIFY = 61;
    public static final int DEALLOCATE = 62;
    public static final int IO_ADVISE = 63;
    public static final int LAYOUTERROR = 64;
    public static final int LAYOUTSTATS = 65;
    public static final int OFFLOAD_CANCEL = 66;
    public static final int OFFLOAD_STATUS = 67;
    public static final int READ_PLUS = 68;
    public static final int SEEK = 69;
    public static final int WRITE_SAME = 70;
    public static final int CLONE = 71;
    // RFC 8276's extended attributes, an extension of minor version 2 (served in 4.1 COMPOUNDs too: see Nfs4Server)
    public static final int GETXATTR = 72;
    public static final int SETXATTR = 73;
    public static final int LISTXATTRS = 74;
    public static final int REMOVEXATTR = 75;
    /** The highest operation number of minor version 2 with RFC 8276's extension. */
    public static final int LAST_V42 = REMOVEXATTR;
    public static final int ILLEGAL = 10044;

    private Op() {}

    /** Operations of minor version 0 only: a 4.1 COMPOUND holding one gets NFS4ERR_NOTSUPP (RFC 8881 §18). */
    /**
     * Operations that put a new object in the current filehandle without giving it a stateid: they unset
     * the current stateid (RFC 8881 §16.2.3.1.2), so a later "current stateid" cannot name another file's state.
     */
    public static boolean replacesCurrentFh(int op) {
        return op == PUTFH || op == PUTROOTFH || op == PUTPUBFH || op == LOOKUP || op == LOOKUPP || op == CREATE;
    }

    /** RFC 8276's operations on extended attributes. */
    public static boolean xattr(int op) { return op >= GETXATTR && op <= REMOVEXATTR; }

    public static boolean v40Only(int op) {
        return op == OPEN_CONFIRM || op == RENEW || op == SETCLIENTID || op == SETCLIENTID_CONFIRM || op == RELEASE_LOCKOWNER;
    }

    /** Operations that change files or directories: NFS4ERR_ROFS on a read-only export (OPEN checks itself). */
    /** Each operation's name by number ("READ", "SEQUENCE"; "ILLEGAL" for the rest), read once from the constants here. */
    private static final String[] NAMES = names();

    private static String[] names() {
        String[] out = new String[LAST_V42 + 1];
        for (java.lang.reflect.Field f : Op.class.getFields()) {
            if (f.getType() != int.class || f.getName().startsWith("LAST_")) continue;
            try {
                int n = f.getInt(null);
                if (n >= 0 && n < out.length) out[n] = f.getName();
            } catch (IllegalAccessException e) {
                throw new AssertionError(e); // public constants
            }
        }
        return out;
    }

    public static String name(int op) { return op >= 0 && op < NAMES.length && NAMES[op] != null ? NAMES[op] : "ILLEGAL"; }

    public static boolean changesFiles(int op) {
        return op == WRITE || op == CREATE || op == REMOVE || op == RENAME || op == LINK || op == SETATTR || op == DEALLOCATE
                || op == SETXATTR || op == REMOVEXATTR;
    }

    /** Operations that may start a 4.1 COMPOUND without SEQUENCE (RFC 8881 §2.6.3.1.1.8). */
    public static boolean sessionless(int op) {
        return op == EXCHANGE_ID || op == CREATE_SESSION || op == DESTROY_SESSION || op == BIND_CONN_TO_SESSION
                || op == DESTROY_CLIENTID;
    }
}
