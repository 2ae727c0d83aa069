package dev.cairn.core.proto;

import java.lang.invoke.LambdaConversionException;
import java.lang.invoke.LambdaMetafactory;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.invoke.VarHandle;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.ToIntFunction;
import java.util.function.ToLongFunction;

/**
 * The binary wire (and metadata) format: a message is its type tag (one byte) followed by its record
 * components in declaration order. Integers are big-endian fixed width, strings and byte arrays are
 * length-prefixed, lists are count-prefixed, enums are their ordinal, nested records are inlined.
 * Decoding checks every length against explicit limits and the bytes actually present, so a hostile
 * frame cannot make the reader allocate more than the frame itself.
 */
public final class Codec {
    /** Largest frame a node accepts; anything larger is refused before it is buffered. */
    public static final int MAX_FRAME_BYTES = 4 << 20;
    /** Largest data payload of one WriteData or DataReply. */
    public static final int MAX_DATA_BYTES = 1 << 20;
    public static final int MAX_STRING_BYTES = 8 << 10;
    public static final int MAX_LIST_ELEMENTS = 1 << 20;

    /** Message tags, append only: the index is the tag on the wire. */
    private static final List<Class<? extends Message>> TAGS = List.of(
            Ack.class,
            MasterProtocol.Register.class,
            MasterProtocol.RegisterReply.class,
            MasterProtocol.Heartbeat.class,
            MasterProtocol.HeartbeatReply.class,
            MasterProtocol.ReportBad.class,
            MasterProtocol.Lookup.class,
            MasterProtocol.Mkdir.class,
            MasterProtocol.Create.class,
            MasterProtocol.AttrReply.class,
            MasterProtocol.ListDir.class,
            MasterProtocol.ListReply.class,
            MasterProtocol.Remove.class,
            MasterProtocol.WriteLease.class,
            MasterProtocol.LeaseReply.class,
            MasterProtocol.CommitLength.class,
            MasterProtocol.GetChunks.class,
            MasterProtocol.ChunksReply.class,
            MasterProtocol.CreateChunk.class,
            MasterProtocol.BumpVersion.class,
            MasterProtocol.DeleteChunk.class,
            ChunkProtocol.WriteData.class,
            ChunkProtocol.SyncChunk.class,
            ChunkProtocol.ReadData.class,
            ChunkProtocol.DataReply.class,
            ChunkProtocol.ChainReply.class,
            MasterProtocol.ReplicateChunk.class,
            MasterProtocol.ClusterStatus.class,
            MasterProtocol.StatusReply.class,
            MasterProtocol.FileInfo.class,
            MasterProtocol.FileInfoReply.class,
            MasterProtocol.Drain.class,
            MasterProtocol.SetClass.class,
            MasterProtocol.ConvertChunk.class,
            MasterProtocol.ChunkInventory.class,
            MasterProtocol.GetAttr.class,
            MasterProtocol.LookupIn.class,
            MasterProtocol.ReadDir.class,
            MasterProtocol.DirReply.class,
            MasterProtocol.CreateIn.class,
            MasterProtocol.Unlink.class,
            MasterProtocol.Rename.class,
            MasterProtocol.Link.class,
            MasterProtocol.SetAttr.class,
            MasterProtocol.ChangeReply.class,
            MasterProtocol.ReplicaStatus.class,
            MasterProtocol.ReplicaStatusReply.class,
            MasterProtocol.ChangeMasters.class,
            MasterProtocol.MastersReply.class,
            MasterProtocol.GetXattr.class,
            MasterProtocol.ListXattrs.class,
            MasterProtocol.SetXattr.class,
            MasterProtocol.XattrReply.class,
            MasterProtocol.VerifyChunk.class,
            MasterProtocol.CloseWindow.class);

    private static final Map<Class<?>, Integer> TAG_OF = new HashMap<>();

    static {
        for (int i = 0; i < TAGS.size(); i++) TAG_OF.put(TAGS.get(i), i);
        assert TAGS.size() < 256 : "tags are one byte";
    }

    private static final ClassValue<RecordShape> SHAPES = new ClassValue<>() {
        @Override protected RecordShape computeValue(Class<?> type) { return RecordShape.of(type); }
    };

    private Codec() {}

    public static byte[] encode(Message m) {
        // a message carrying data is sized exactly first, so its frame is allocated once and never copied
        boolean sized = shape(m.getClass()).carriesBytes;
        Out out = new Out(sized ? 1 + size(m) : Out.INITIAL);
        writeMessage(out, m);
        assert !sized || out.pos == out.buf.length : "size() disagrees with the encoding of " + m.getClass().getSimpleName();
        return out.bytes();
    }

    private static void writeMessage(Out out, Message m) {
        RecordShape s = shape(m.getClass());
        if (s.tag < 0) throw new IllegalArgumentException("no wire tag for " + m.getClass().getName());
        out.byte1(s.tag);
        writeRecord(out, m, s);
    }

    /**
     * Encodes frames for a sender that is done with each frame's buffer before it encodes the next: the simulated
     * network, which digests and decodes a frame at once, and the real one, which copies the small fields and
     * sends the payloads from the message's own arrays ({@link Frame#pieces}). The frame's small fields go into one buffer it
     * keeps; a large byte array (a chunk's data) is spliced in by reference, not copied: the frame is the
     * same bytes as {@link #encode}'s, read in pieces ({@link Frame#digest}, {@link Frame#decode}). So a
     * payload is read once to digest it and copied once into the receiver's message, where a flat frame
     * copied it twice. Not thread-safe; one per sender.
     */
    public static final class Encoder {
        private final Out out = new Out();
        private final Frame frame = new Frame(out);

        { out.splices = new Splices(); }

        /** The frame of {@code m}, valid until the next call. */
        public Frame encode(Message m) {
            out.pos = 0;
            out.splices.clear();
            writeMessage(out, m);
            assert !shape(m.getClass()).carriesBytes || frame.length() == 1 + size(m) : "size() disagrees with the encoding of " + m.getClass().getSimpleName();
            return frame;
        }
    }

    /** Receives a {@link Frame} piece by piece; {@code payload}: a message's own array, not the encoder's buffer. */
    public interface PieceSink {
        void piece(byte[] bytes, int offset, int length, boolean payload);
    }

    /** Byte arrays of at least this many bytes are spliced into an {@link Encoder}'s frame by reference. */
    static final int SPLICE_MIN_BYTES = 512;

    /** Payloads an {@link Encoder} left out of its buffer: each array and the buffer position it belongs at. */
    private static final class Splices {
        byte[][] arrays = new byte[4][];
        int[] at = new int[4];
        int count;
        long bytes;

        void clear() {
            Arrays.fill(arrays, 0, count, null); // keep no payload alive
            count = 0;
            bytes = 0;
        }

        void add(int pos, byte[] b) {
            if (count == arrays.length) {
                arrays = Arrays.copyOf(arrays, 2 * count);
                at = Arrays.copyOf(at, 2 * count);
            }
            arrays[count] = b;
            at[count++] = pos;
            bytes += b.length;
        }
    }

    /** One frame of an {@link Encoder}: the buffer's bytes with the spliced payloads at their places. */
    public static final class Frame {
        private final Out out;

        private Frame(Out out) { this.out = out; }

        /** Bytes of the whole frame, payloads included. */
        public long length() { return out.pos + out.splices.bytes; }

        /** Feeds the whole frame, in order, to {@code digest}. */
        public void digest(java.util.zip.Checksum digest) {
            Splices sp = out.splices;
            int from = 0;
            for (int i = 0; i < sp.count; i++) {
                digest.update(out.buf, from, sp.at[i] - from);
                digest.update(sp.arrays[i], 0, sp.arrays[i].length);
                from = sp.at[i];
            }
            digest.update(out.buf, from, out.pos - from);
        }

        /**
         * Hands the whole frame, in order, to {@code to}: the buffer's bytes between payloads (valid until the
         * encoder's next call, so a sender keeping them copies them) and each payload array itself.
         */
        public void pieces(PieceSink to) {
            Splices sp = out.splices;
            int from = 0;
            for (int i = 0; i < sp.count; i++) {
                if (sp.at[i] > from) to.piece(out.buf, from, sp.at[i] - from, false);
                to.piece(sp.arrays[i], 0, sp.arrays[i].length, true);
                from = sp.at[i];
            }
            if (out.pos > from) to.piece(out.buf, from, out.pos - from, false);
        }

        /** Decodes the frame (any number of times): every payload is copied into the message decoded. */
        public Message decode() throws CodecException {
            return Codec.decode(ByteBuffer.wrap(out.buf, 0, out.pos), out.splices);
        }
    }

    public static Message decode(byte[] frame) throws CodecException {
        return decode(ByteBuffer.wrap(frame));
    }

    public static Message decode(ByteBuffer frame) throws CodecException {
        return decode(frame, null);
    }

    private static Message decode(ByteBuffer frame, Splices splices) throws CodecException {
        try {
            if (!frame.hasRemaining()) throw new CodecException("empty frame");
            int tag = frame.get() & 0xff;
            if (tag >= TAGS.size()) throw new CodecException("unknown message tag " + tag);
            In in = new In(frame, splices);
            Message m = (Message) readRecord(in, TAGS.get(tag));
            if (frame.hasRemaining()) throw new CodecException(frame.remaining() + " trailing bytes after " + TAGS.get(tag).getSimpleName());
            assert splices == null || in.nextSplice == splices.count : "spliced payloads left over";
            return m;
        } catch (BufferUnderflowException e) {
            throw new CodecException("truncated frame", e);
        }
    }

    /** Encodes any supported record without a tag (metadata records in the key-value store). */
    public static byte[] encodeRecord(Record r) {
        Out out = new Out();
        writeRecord(out, r);
        return out.bytes();
    }

    public static <T extends Record> T decodeRecord(byte[] bytes, Class<T> type) throws CodecException {
        ByteBuffer in = ByteBuffer.wrap(bytes);
        try {
            T r = type.cast(readRecord(new In(in, null), type));
            if (in.hasRemaining()) throw new CodecException("trailing bytes after " + type.getSimpleName());
            return r;
        } catch (BufferUnderflowException e) {
            throw new CodecException("truncated " + type.getSimpleName(), e);
        }
    }

    // ---------------------------------------------------------------------------------------------

    /** What a component is on the wire. */
    private enum Kind { LONG, INT, BOOL, STRING, BYTES, ENUM, LIST, RECORD, UNSUPPORTED }

    /**
     * A component's type, classified once per record type: encoding and decoding switch on the kind rather
     * than asking reflection about the class of every value (which showed up in simulator profiles).
     */
    private record Field(Kind kind, Type type, Class<?> raw, Field element, Object[] constants, RecordShape[] nested) {
        Field(Kind kind, Type type, Class<?> raw, Field element, Object[] constants) {
            this(kind, type, raw, element, constants, new RecordShape[1]);
        }

        /**
         * A RECORD component's shape, looked up on first use (types may nest) and kept: a record type is
         * final, so every value has it (a class-value lookup per nested record, for each of an inventory's
         * thousands of entries, showed up in simulator profiles). A race sets the same shape twice.
         */
        RecordShape shape() {
            RecordShape s = nested[0];
            if (s == null) nested[0] = s = Codec.shape(raw);
            return s;
        }

        static Field of(Type t) {
            Class<?> raw = t instanceof Class<?> c ? c : t instanceof ParameterizedType p ? (Class<?>) p.getRawType() : null;
            if (raw == null) return new Field(Kind.UNSUPPORTED, t, null, null, null);
            if (raw == long.class || raw == Long.class) return new Field(Kind.LONG, t, raw, null, null);
            if (raw == int.class || raw == Integer.class) return new Field(Kind.INT, t, raw, null, null);
            if (raw == boolean.class || raw == Boolean.class) return new Field(Kind.BOOL, t, raw, null, null);
            if (raw == String.class) return new Field(Kind.STRING, t, raw, null, null);
            if (raw == byte[].class) return new Field(Kind.BYTES, t, raw, null, null);
            if (raw.isEnum()) return new Field(Kind.ENUM, t, raw, null, raw.getEnumConstants());
            if (raw == List.class && t instanceof ParameterizedType p) return new Field(Kind.LIST, t, raw, of(p.getActualTypeArguments()[0]), null);
            if (raw.isRecord()) return new Field(Kind.RECORD, t, raw, null, null); // its shape is looked up when used (types may nest)
            return new Field(Kind.UNSUPPORTED, t, raw, null, null);
        }
    }

    /**
     * A record type's components, classified; a generated accessor function per component (a plain
     * interface call: invoking a method handle that is not a constant costs several hidden frames per
     * field, which showed up in simulator profiles); and a reader: one method handle typed
     * {@code (In)Object} that reads the components in order and calls the canonical constructor with them
     * ({@link #reader}; one invocation per record, as the spread constructor was), longs and ints unboxed,
     * so a decode makes no argument array (a
     * spread {@code Object[]} per record, for each of an inventory's thousands of entries, showed up in
     * simulator profiles).
     */
    private record RecordShape(Field[] fields, Function<Object, Object>[] getters, ToLongFunction<Object>[] longGetters, ToIntFunction<Object>[] intGetters,
                               MethodHandle reader, boolean carriesBytes, int fixedBytes, int tag) {
        static RecordShape of(Class<?> t) {
            if (!t.isRecord()) throw new IllegalArgumentException(t.getName() + " is not a record");
            RecordComponent[] cs = t.getRecordComponents();
            @SuppressWarnings("unchecked") Function<Object, Object>[] getters = new Function[cs.length];
            @SuppressWarnings("unchecked") ToLongFunction<Object>[] longGetters = new ToLongFunction[cs.length];
            @SuppressWarnings("unchecked") ToIntFunction<Object>[] intGetters = new ToIntFunction[cs.length];
            Class<?>[] classes = new Class<?>[cs.length];
            Field[] fields = new Field[cs.length];
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            try {
                int fixedBytes = 0;
                for (int i = 0; i < cs.length; i++) {
                    getters[i] = getter(lookup, t, cs[i]);
                    classes[i] = cs[i].getType();
                    fields[i] = Field.of(cs[i].getGenericType());
                    // primitive components are read without boxing, and sized without being read at all
                    if (classes[i] == long.class) {
                        longGetters[i] = primitiveGetter(lookup, t, cs[i], ToLongFunction.class, "applyAsLong");
                        fixedBytes += 8;
                    } else if (classes[i] == int.class) {
                        intGetters[i] = primitiveGetter(lookup, t, cs[i], ToIntFunction.class, "applyAsInt");
                        fixedBytes += 4;
                    }
                }
                MethodHandle ctor = lookup.unreflectConstructor(t.getDeclaredConstructor(classes));
                boolean carriesBytes = false;
                for (Field f : fields) carriesBytes |= f.kind() == Kind.BYTES;
                // a message's wire tag, looked up once (a map lookup per message showed up in simulator profiles)
                return new RecordShape(fields, getters, longGetters, intGetters, reader(lookup, ctor, fields, classes), carriesBytes, fixedBytes,
                        TAG_OF.getOrDefault(t, -1));
            } catch (ReflectiveOperationException e) {
                throw new IllegalArgumentException("record " + t.getName() + " must be public", e);
            }
        }

        /**
         * {@code (In)Object}: reads component 0, then 1, ... then calls {@code ctor}. Built from the last
         * component back: {@code foldArguments} runs its combiner (a component's reader) before its target
         * (the readers of the components after it, then the constructor), so the order is the wire's.
         */
        private static MethodHandle reader(MethodHandles.Lookup lookup, MethodHandle ctor, Field[] fields, Class<?>[] classes)
                throws ReflectiveOperationException {
            int n = classes.length;
            MethodHandle h = MethodHandles.dropArguments(ctor.asType(ctor.type().changeReturnType(Object.class)), n, In.class);
            for (int k = n - 1; k >= 0; k--) h = MethodHandles.foldArguments(h, k, componentReader(lookup, fields[k], classes[k]));
            assert h.type().equals(MethodType.methodType(Object.class, In.class)) : h.type();
            return h;
        }

        /** {@code (In)T} for a component of class {@code type}: a primitive long or int read as it is, anything else by {@link #readValue}. */
        private static MethodHandle componentReader(MethodHandles.Lookup lookup, Field f, Class<?> type) throws ReflectiveOperationException {
            if (type == long.class) return lookup.findStatic(Codec.class, "readLong", MethodType.methodType(long.class, In.class));
            if (type == int.class) return lookup.findStatic(Codec.class, "readInt", MethodType.methodType(int.class, In.class));
            MethodHandle any = lookup.findStatic(Codec.class, "readValue", MethodType.methodType(Object.class, In.class, Field.class));
            return MethodHandles.insertArguments(any, 1, f).asType(MethodType.methodType(type, In.class));
        }

        /** A function calling the accessor of {@code c} (a primitive comes boxed). */
        @SuppressWarnings("unchecked")
        private static Function<Object, Object> getter(MethodHandles.Lookup lookup, Class<?> t, RecordComponent c) throws ReflectiveOperationException {
            MethodHandle accessor = lookup.unreflect(c.getAccessor());
            Class<?> type = c.getType();
            Class<?> boxed = type.isPrimitive() ? MethodType.methodType(type).wrap().returnType() : type;
            try {
                return (Function<Object, Object>) LambdaMetafactory.metafactory(lookup, "apply", MethodType.methodType(Function.class),
                        MethodType.methodType(Object.class, Object.class), accessor, MethodType.methodType(boxed, t)).getTarget().invokeExact();
            } catch (LambdaConversionException e) {
                throw new IllegalAccessException("cannot generate an accessor for " + t.getName() + "." + c.getName() + ": " + e.getMessage());
            } catch (Throwable e) {
                throw new IllegalStateException(e);
            }
        }

        /** A {@code sam} implementation ({@code ToLongFunction} or {@code ToIntFunction}) calling the primitive accessor of {@code c}. */
        @SuppressWarnings("unchecked")
        private static <F> F primitiveGetter(MethodHandles.Lookup lookup, Class<?> t, RecordComponent c, Class<F> sam, String method) throws ReflectiveOperationException {
            MethodHandle accessor = lookup.unreflect(c.getAccessor());
            Class<?> type = c.getType();
            try {
                return (F) LambdaMetafactory.metafactory(lookup, method, MethodType.methodType(sam),
                        MethodType.methodType(type, Object.class), accessor, MethodType.methodType(type, t)).getTarget().invoke();
            } catch (LambdaConversionException e) {
                throw new IllegalAccessException("cannot generate an accessor for " + t.getName() + "." + c.getName() + ": " + e.getMessage());
            } catch (Throwable e) {
                throw new IllegalStateException(e);
            }
        }
    }

    private static RecordShape shape(Class<?> type) { return SHAPES.get(type); }

    /** Component {@code i} of record {@code r}. */
    private static Object component(RecordShape s, int i, Object r) { return s.getters[i].apply(r); }

    private static void writeRecord(Out out, Object r) { writeRecord(out, r, shape(r.getClass())); }

    private static void writeRecord(Out out, Object r, RecordShape s) {
        for (int i = 0; i < s.fields.length; i++) {
            if (s.longGetters[i] != null) out.long8(s.longGetters[i].applyAsLong(r));
            else if (s.intGetters[i] != null) out.int4(s.intGetters[i].applyAsInt(r));
            else writeValue(out, s.fields[i], component(s, i, r));
        }
    }

    /** Bytes {@code r} encodes to (without a tag); agrees with {@link #writeRecord}, which checks the limits. */
    private static int size(Object r) { return size(r, shape(r.getClass())); }

    private static int size(Object r, RecordShape s) {
        int n = s.fixedBytes;
        for (int i = 0; i < s.fields.length; i++) if (s.longGetters[i] == null && s.intGetters[i] == null) n += size(s.fields[i], component(s, i, r));
        return n;
    }

    private static int size(Field f, Object v) {
        if (v == null) return 0; // writeValue refuses it
        return switch (f.kind()) {
            case LONG -> 8;
            case INT -> 4;
            case BOOL, ENUM -> 1;
            case STRING -> {
                String str = (String) v;
                boolean ascii = true;
                for (int i = 0; i < str.length() && ascii; i++) ascii = str.charAt(i) < 0x80;
                yield 4 + (ascii ? str.length() : str.getBytes(StandardCharsets.UTF_8).length);
            }
            case BYTES -> 4 + ((byte[]) v).length;
            case LIST -> {
                int n = 4;
                for (Object e : (List<?>) v) n += size(f.element(), e);
                yield n;
            }
            case RECORD -> size(v, f.shape());
            case UNSUPPORTED -> 0;
        };
    }

    private static void writeValue(Out out, Field f, Object v) {
        if (v == null) throw new IllegalArgumentException("null " + f.type().getTypeName() + " cannot be encoded");
        switch (f.kind()) {
            case LONG -> out.long8((Long) v);
            case INT -> out.int4((Integer) v);
            case BOOL -> out.byte1((Boolean) v ? 1 : 0);
            case STRING -> {
                if (out.ascii((String) v)) return; // the common case, written straight into the buffer
                byte[] b = utf8((String) v);
                if (b.length > MAX_STRING_BYTES) throw new IllegalArgumentException("string over " + MAX_STRING_BYTES + " bytes");
                out.int4(b.length);
                out.bytes(b);
            }
            case BYTES -> {
                byte[] b = (byte[]) v;
                out.int4(b.length);
                if (out.splices != null && b.length >= SPLICE_MIN_BYTES) out.splices.add(out.pos, b);
                else out.bytes(b);
            }
            case ENUM -> out.byte1(((Enum<?>) v).ordinal());
            case LIST -> {
                List<?> list = (List<?>) v;
                if (list.size() > MAX_LIST_ELEMENTS) throw new IllegalArgumentException("list over " + MAX_LIST_ELEMENTS);
                out.int4(list.size());
                for (Object e : list) writeValue(out, f.element(), e);
            }
            case RECORD -> writeRecord(out, v, f.shape());
            case UNSUPPORTED -> throw new IllegalArgumentException("unsupported field type " + f.type());
        }
    }

    /** A frame being decoded, and the payloads spliced into it (null: none). */
    private static final class In {
        final ByteBuffer buf;
        final Splices splices;
        int nextSplice;

        In(ByteBuffer buf, Splices splices) {
            this.buf = buf;
            this.splices = splices;
        }
    }

    private static Object readRecord(In in, Class<?> type) throws CodecException { return readRecord(in, type, shape(type)); }

    private static Object readRecord(In in, Class<?> type, RecordShape s) throws CodecException {
        try {
            return (Object) s.reader.invokeExact(in);
        } catch (CodecException | BufferUnderflowException e) {
            throw e; // a component's reader: the frame is bad, not the record
        } catch (IllegalArgumentException e) {
            throw new CodecException("invalid " + type.getSimpleName() + ": " + e.getMessage(), e);
        } catch (Throwable t) {
            throw new CodecException("cannot build " + type.getSimpleName() + ": " + t, t);
        }
    }

    /** A primitive component's reader (see {@link RecordShape#reader}). */
    private static long readLong(In in) { return in.buf.getLong(); }

    private static int readInt(In in) { return in.buf.getInt(); }

    private static Object readValue(In frame, Field f) throws CodecException {
        ByteBuffer in = frame.buf;
        switch (f.kind()) {
            case LONG: return in.getLong();
            case INT: return in.getInt();
            case BOOL: {
                int b = in.get();
                if (b != 0 && b != 1) throw new CodecException("bad boolean " + b);
                return b == 1;
            }
            case STRING: {
                int n = length(in, MAX_STRING_BYTES, "string");
                if (ascii(in, n)) { // the common case: no decoder needed, and ASCII is always valid UTF-8
                    String str;
                    if (in.hasArray()) {
                        str = new String(in.array(), in.arrayOffset() + in.position(), n, StandardCharsets.ISO_8859_1);
                        in.position(in.position() + n);
                    } else {
                        byte[] b = new byte[n];
                        in.get(b);
                        str = new String(b, StandardCharsets.ISO_8859_1);
                    }
                    return str;
                }
                ByteBuffer slice = in.slice().limit(n);
                in.position(in.position() + n);
                try {
                    return StandardCharsets.UTF_8.newDecoder()
                            .onMalformedInput(CodingErrorAction.REPORT)
                            .onUnmappableCharacter(CodingErrorAction.REPORT)
                            .decode(slice).toString();
                } catch (CharacterCodingException e) {
                    throw new CodecException("string is not valid UTF-8", e);
                }
            }
            case BYTES: {
                Splices sp = frame.splices;
                if (sp != null && frame.nextSplice < sp.count && sp.at[frame.nextSplice] == in.position() + 4) {
                    byte[] b = sp.arrays[frame.nextSplice++];
                    if (in.getInt() != b.length) throw new CodecException("spliced payload length mismatch");
                    return b.clone();
                }
                int n = length(in, Integer.MAX_VALUE, "byte array");
                if (in.hasArray()) {
                    // one copy out of the frame, into an array not zeroed first (a payload is up to 1 MiB)
                    int at = in.arrayOffset() + in.position();
                    in.position(in.position() + n);
                    return Arrays.copyOfRange(in.array(), at, at + n);
                }
                byte[] b = new byte[n];
                in.get(b);
                return b;
            }
            case ENUM: {
                int ord = in.get() & 0xff;
                Object[] values = f.constants();
                if (ord >= values.length) throw new CodecException("bad " + f.raw().getSimpleName() + " ordinal " + ord);
                return values[ord];
            }
            case LIST: {
                // every element takes at least one byte, so the remaining bytes bound the count
                int n = length(in, MAX_LIST_ELEMENTS, "list");
                List<Object> list = new ArrayList<>(n); // n is bounded by the bytes left in the frame
                for (int i = 0; i < n; i++) list.add(readValue(frame, f.element()));
                return Collections.unmodifiableList(list); // no copy: nothing else holds the list
            }
            case RECORD: return readRecord(frame, f.raw(), f.shape());
            default: throw new CodecException("unsupported field type " + f.type());
        }
    }

    private static int length(ByteBuffer in, int max, String what) throws CodecException {
        int n = in.getInt();
        if (n < 0 || n > max) throw new CodecException(what + " length " + n + " out of range");
        if (n > in.remaining()) throw new CodecException(what + " length " + n + " exceeds the " + in.remaining() + " bytes left");
        return n;
    }

    private static boolean ascii(ByteBuffer in, int n) {
        if (in.hasArray()) {
            byte[] a = in.array();
            for (int i = in.arrayOffset() + in.position(), end = i + n; i < end; i++) if (a[i] < 0) return false;
            return true;
        }
        for (int i = in.position(), end = i + n; i < end; i++) if (in.get(i) < 0) return false;
        return true;
    }

    /** Strict UTF-8: a string with unpaired surrogates cannot be sent (it would not come back equal). */
    private static byte[] utf8(String s) {
        boolean ascii = true;
        for (int i = 0; i < s.length() && ascii; i++) ascii = s.charAt(i) < 0x80;
        if (ascii) return s.getBytes(StandardCharsets.ISO_8859_1);
        try {
            ByteBuffer b = StandardCharsets.UTF_8.newEncoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .encode(java.nio.CharBuffer.wrap(s));
            byte[] out = new byte[b.remaining()];
            b.get(out);
            return out;
        } catch (CharacterCodingException e) {
            throw new IllegalArgumentException("string is not valid Unicode", e);
        }
    }

    /**
     * Growable big-endian output. Grows to fit a large byte array in one step (with room for the fields
     * after it), so a message carrying a chunk's data is copied once into the buffer and once out of it.
     */
    private static final class Out {
        static final int INITIAL = 128;
        private byte[] buf;
        private int pos;
        /** Set for an {@link Encoder}'s buffer: large byte arrays are recorded here, not copied. */
        Splices splices;

        Out(int capacity) { buf = new byte[capacity]; }

        Out() { this(INITIAL); }

        private void ensure(int n) {
            if (pos + n > buf.length) buf = Arrays.copyOf(buf, Math.max(2 * buf.length, pos + n + 256));
        }

        void byte1(int v) {
            ensure(1);
            buf[pos++] = (byte) v;
        }

        void int4(int v) {
            ensure(4);
            INT.set(buf, pos, v);
            pos += 4;
        }

        void long8(long v) {
            ensure(8);
            LONG.set(buf, pos, v);
            pos += 8;
        }

        /** Writes {@code s} length-prefixed if it is ASCII (then its UTF-8 bytes are its chars); false, writing nothing, if not. */
        boolean ascii(String s) {
            int n = s.length();
            if (n > MAX_STRING_BYTES) return false;
            ensure(4 + n);
            int at = pos + 4;
            for (int i = 0; i < n; i++) {
                char c = s.charAt(i);
                if (c >= 0x80) return false;
                buf[at + i] = (byte) c;
            }
            INT.set(buf, pos, n);
            pos = at + n;
            return true;
        }

        void bytes(byte[] b) {
            ensure(b.length);
            System.arraycopy(b, 0, buf, pos, b.length);
            pos += b.length;
        }

        byte[] bytes() { return pos == buf.length ? buf : Arrays.copyOf(buf, pos); }
    }

    private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);
    private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);
}
