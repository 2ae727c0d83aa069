package dev.cairn.chaos;

import dev.cairn.core.async.Promise;
import dev.cairn.nfs.client.Nfs4Client;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;

/**
 * One TCP connection to an NFS gateway for {@link Nfs4Client}, with RPC record marking (RFC 5531 §11) and calls
 * pipelined: each reply is matched to its call by xid (the first word of both) and completed on {@code loop}.
 * When the connection breaks, every call waiting and every later one fails: none is left unanswered.
 */
public final class NfsTcpChannel implements Nfs4Client.Channel, AutoCloseable {
    static final int MAX_REPLY = 4 << 20;

    private final Socket socket;
    private final OutputStream out;
    private final DataInputStream in;
    private final Executor loop;
    private final Map<Integer, Promise<byte[]>> waiting = new ConcurrentHashMap<>();
    private volatile IOException broken;

    public NfsTcpChannel(String host, int port, Executor loop) throws IOException {
        this.loop = loop;
        socket = new Socket(host, port);
        socket.setTcpNoDelay(true);
        out = new BufferedOutputStream(socket.getOutputStream(), 1 << 16);
        in = new DataInputStream(new BufferedInputStream(socket.getInputStream(), 1 << 16));
        Thread reader = new Thread(this::readReplies, "nfs-reader-" + port);
        reader.setDaemon(true);
        reader.start();
    }

    @Override public Promise<byte[]> call(byte[] record) {
        Promise<byte[]> p = new Promise<>();
        int xid = ByteBuffer.wrap(record).getInt();
        waiting.put(xid, p);
        try {
            synchronized (out) {
                out.write(ByteBuffer.allocate(4).putInt(0x8000_0000 | record.length).array());
                out.write(record);
                out.flush();
            }
        } catch (IOException e) {
            waiting.remove(xid);
            return Promise.failed(e);
        }
        IOException b = broken;
        if (b != null && waiting.remove(xid) != null) return Promise.failed(b); // the reader is gone: nobody would answer it
        return p;
    }

    private void readReplies() {
        try {
            while (true) {
                ByteArrayOutputStream reply = new ByteArrayOutputStream();
                boolean last;
                do {
                    int mark = in.readInt();
                    last = mark < 0;
                    int len = mark & 0x7fff_ffff;
                    if (reply.size() + len > MAX_REPLY) throw new IOException("reply over " + MAX_REPLY + " bytes");
                    byte[] frag = new byte[len];
                    in.readFully(frag);
                    reply.write(frag);
                } while (!last);
                byte[] r = reply.toByteArray();
                Promise<byte[]> p = waiting.remove(ByteBuffer.wrap(r).getInt());
                if (p != null) loop.execute(() -> p.complete(r));
            }
        } catch (IOException e) {
            broken = e;
            for (Integer xid : List.copyOf(waiting.keySet())) {
                Promise<byte[]> p = waiting.remove(xid);
                if (p != null) loop.execute(() -> p.fail(e));
            }
        }
    }

    @Override public void close() throws IOException { socket.close(); }
}
