package dev.cairn.sim;

import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * NFSv4.0 COMPOUNDs sent as raw RPC records (the test client, {@code Nfs4Client}, speaks 4.1): AUTH_SYS as root,
 * minor version 0, a fresh xid each, each reply read operation by operation.
 */
final class Raw40 {
    /** Sends one record and waits for its reply (null: none came). */
    private final Function<byte[], byte[]> send;
    private int xid;

    Raw40(Function<byte[], byte[]> send, int firstXid) {
        this.send = send;
        this.xid = firstXid;
    }

    /** The record of a COMPOUND of {@code count} operations, written by {@code ops}, under the next xid. */
    byte[] record(Consumer<XdrEncoder> ops, int count) {
        XdrEncoder e = new XdrEncoder();
        e.writeInt(xid++).writeInt(0).writeInt(2).writeInt(100003).writeInt(4).writeInt(1);
        byte[] cred = new XdrEncoder().writeInt(0).writeString("host").writeInt(0).writeInt(0).writeInt(0).toByteArray();
        e.writeInt(1).writeOpaque(cred).writeInt(0).writeOpaque(new byte[0]); // AUTH_SYS root, AUTH_NONE verifier
        e.writeOpaque(new byte[0]).writeInt(0).writeInt(count); // tag, minor version 0
        ops.accept(e);
        return e.toByteArray();
    }

    /** Runs the operations; answers the reply positioned at the first result, and the COMPOUND's status in {@code status[0]}. */
    XdrDecoder run(int[] status, Consumer<XdrEncoder> ops, int count) {
        byte[] reply = send.apply(record(ops, count));
        XdrDecoder d = new XdrDecoder(reply);
        d.skip(24); // the RPC reply header: xid, REPLY, MSG_ACCEPTED, AUTH_NONE verifier, SUCCESS
        status[0] = d.readInt();
        d.readOpaque(1024); // tag
        d.readInt(); // results
        return d;
    }

    /** SETCLIENTID and its SETCLIENTID_CONFIRM for the client {@code id}: the confirmed client id. */
    long establish(String id) {
        int[] status = new int[1];
        XdrDecoder d = run(status, e -> e.writeInt(dev.cairn.nfs.v4.Op.SETCLIENTID).writeFixedOpaque(new byte[8]).writeOpaque(id.getBytes())
                .writeInt(0x40000000).writeString("tcp").writeString("127.0.0.1.0.0").writeInt(1), 1);
        check(status, "SETCLIENTID");
        d.readInt();
        d.readInt();
        long clientId = d.readLong();
        byte[] confirm = d.readFixedOpaque(8);
        run(status, e -> e.writeInt(dev.cairn.nfs.v4.Op.SETCLIENTID_CONFIRM).writeLong(clientId).writeFixedOpaque(confirm), 1);
        check(status, "SETCLIENTID_CONFIRM");
        return clientId;
    }

    static void check(int[] status, String what) {
        if (status[0] != 0) throw new AssertionError(what + " failed: NFS4 status " + status[0]);
    }
}
