package dev.cairn.master.meta;

import dev.cairn.core.proto.CodecException;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Constructor;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * How the master's durable records are encoded: the values of its key-value store (inodes, chunks, the outcomes
 * kept for retries), and so its snapshots, and the commands of its log. Records outlive the code that wrote them
 * (a master replays its log and opens its store after an upgrade), so this encoding is its own, versioned, and
 * apart from the wire codec ({@link dev.cairn.core.proto.Codec}), which may change with the protocol.
 *
 * <p><b>Encoding 2</b> (written now): a mark byte {@link #MARK_2}, then the record: the number of its fields,
 * then each field in declaration order. Integers are zigzag varints, counts and lengths unsigned varints,
 * booleans one byte (0 or 1), strings length-prefixed UTF-8 (checked), enums their constant's name (so constants
 * may be added and reordered), lists a count and their elements, nested records the same as a record.
 *
 * <p><b>Encoding 1</b> (read only): what masters wrote before encoding 2, the wire codec's record layout of the
 * day: fields in order with no count, longs 8 bytes and ints 4 (big-endian), strings, byte arrays and lists with
 * a 4-byte count, enums by ordinal. Its records begin with a zero byte (a big-endian inode, chunk id or count),
 * which tells them from encoding 2's mark. The ordinals it used are pinned in {@link #ENCODING_1_ENUMS}.
 *
 * <p><b>Changing a stored record</b> (a record the store or the log holds: {@link MetaCommand}s, {@code
 * InodeRecord}, {@link ChunkRecord}, the outcomes): add fields at the end only, each with zero, false, "" or
 * an empty list as its "not recorded" value, which older records decode to; pin the record's old field count in
 * {@link #ENCODING_1_FIELDS}. Any other change (a field removed, retyped, reordered, or needing another default)
 * takes a new encoding number with a reader for the old one. A newer record (more fields than this code knows, a
 * mark it does not know) is refused with an error naming it, never half-read. {@code StoreFormatTest} opens a
 * store and a log written by every encoding (fixtures in the repository, never rewritten).
 */
public final class StoreFormat {
    /** The record encoding written now. */
    public static final int ENCODING = 2;
    /** First byte of a record in encoding 2 (encoding 1's records begin with 0; a log entry's tag was below 0x80). */
    public static final byte MARK_2 = (byte) (0x80 | ENCODING);

    /** Nested records at most (the stored records nest two deep; a loop in a damaged record must end). */
    private static final int MAX_DEPTH = 8;

    /**
     * Enum constants by encoding-1 ordinal, by enum class name: the order they had when encoding 1 was written.
     * Never changed.
     */
    static final Map<String, List<String>> ENCODING_1_ENUMS = Map.of(
            "dev.cairn.core.proto.Types$FileType", List.of("FILE", "DIR", "SYMLINK", "FIFO", "SOCKET", "CHAR_DEVICE", "BLOCK_DEVICE"),
            "dev.cairn.core.proto.StorageClass$Domain", List.of("SERVER", "HOST", "RACK"));

    /**
     * Field counts of records that gained fields since encoding 1 was written (a record absent here has the
     * fields it had then). Entries are only ever added.
     */
    static final Map<String, Integer> ENCODING_1_FIELDS = Map.of();

    private StoreFormat() {}

    // ---------------------------------------------------------------- records

    /** {@code r} in the current encoding. */
    public static byte[] encode(Record r) {
        Out out = new Out(64);
        out.bytes[out.pos++] = MARK_2;
        writeRecord(out, r, 0);
        return Arrays.copyOf(out.bytes, out.pos);
    }

    /** A record of {@code type} from {@code b} in any encoding this code reads; all of {@code b} must be used. */
    public static <T extends Record> T decode(byte[] b, Class<T> type) throws CodecException {
        return decode(b, 0, type);
    }

    /** As {@link #decode(byte[], Class)}, from {@code offset} to the end of {@code b}. */
    public static <T extends Record> T decode(byte[] b, int offset, Class<T> type) throws CodecException {
        if (offset >= b.length) throw new CodecException("empty " + type.getSimpleName() + " record");
        byte first = b[offset];
        In in;
        if (first == MARK_2) in = new In(b, offset + 1, 2);
        else if (first == 0) in = new In(b, offset, 1);
        else throw new CodecException(type.getSimpleName() + " record in unknown encoding (first byte 0x" + Integer.toHexString(first & 0xff)
                + "): written by a newer Cairn?");
        T r = type.cast(in.encoding == 2 ? readRecord(in, type, 0) : readRecord1(in, type, 0));
        if (in.pos != b.length) throw new CodecException(type.getSimpleName() + " record: " + (b.length - in.pos) + " bytes left over");
        return r;
    }

    // ---------------------------------------------------------------- log entries

    /** A log entry: the mark, the command's tag, the command. */
    static byte[] encodeEntry(int tag, Record command) {
        assert tag >= 0 && tag < 0x80 : "tag " + tag;
        Out out = new Out(64);
        out.bytes[out.pos++] = MARK_2;
        out.bytes[out.pos++] = (byte) tag;
        writeRecord(out, command, 0);
        return Arrays.copyOf(out.bytes, out.pos);
    }

    /** The tag of a log entry (encoding 1 began with it; encoding 2 puts it after the mark). */
    static int entryTag(byte[] entry) throws CodecException {
        if (entry.length == 0) throw new CodecException("empty log entry");
        if (entry[0] == MARK_2) {
            if (entry.length < 2) throw new CodecException("log entry without a tag");
            return entry[1] & 0xff;
        }
        if ((entry[0] & 0x80) != 0) {
            throw new CodecException("log entry in unknown encoding (first byte 0x" + Integer.toHexString(entry[0] & 0xff) + "): written by a newer Cairn?");
        }
        return entry[0];
    }

    static <T extends Record> T decodeEntry(byte[] entry, Class<T> type) throws CodecException {
        In in = entry[0] == MARK_2 ? new In(entry, 2, 2) : new In(entry, 1, 1);
        T r = type.cast(in.encoding == 2 ? readRecord(in, type, 0) : readRecord1(in, type, 0));
        if (in.pos != entry.length) throw new CodecException(type.getSimpleName() + " log entry: " + (entry.length - in.pos) + " bytes left over");
        return r;
    }

    // ---------------------------------------------------------------- encoding 2

    private static void writeRecord(Out out, Object r, int depth) {
        Shape s = shape(r.getClass());
        if (depth > MAX_DEPTH) throw new IllegalArgumentException(s.type.getSimpleName() + " nested too deep");
        out.uvarint(s.fields.length);
        for (int i = 0; i < s.fields.length; i++) {
            try {
                // primitives unboxed: most fields of the stored records are longs and ints
                Class<?> raw = s.fields[i].raw;
                if (raw == long.class) out.svarint((long) s.getters[i].invokeExact(r));
                else if (raw == int.class) out.svarint((int) s.getters[i].invokeExact(r));
                else writeValue(out, s.fields[i], (Object) s.getters[i].invokeExact(r), s, i, depth);
            } catch (RuntimeException e) {
                throw e;
            } catch (Throwable t) {
                throw new IllegalStateException("reading " + where(s, i), t);
            }
        }
    }

    private static void writeValue(Out out, Field f, Object v, Shape s, int field, int depth) {
        if (v == null) throw new IllegalArgumentException("null " + where(s, field) + " cannot be stored");
        switch (f.kind) {
            case LONG -> out.svarint((Long) v);
            case INT -> out.svarint((Integer) v);
            case BOOL -> out.byte1((Boolean) v ? 1 : 0);
            case STRING -> out.string((String) v);
            case BYTES -> out.sized((byte[]) v);
            case ENUM -> out.string(((Enum<?>) v).name());
            case LIST -> {
                List<?> list = (List<?>) v;
                out.uvarint(list.size());
                for (Object e : list) writeValue(out, f.element, e, s, field, depth);
            }
            case RECORD -> writeRecord(out, v, depth + 1);
        }
    }

    private static Object readRecord(In in, Class<?> type, int depth) throws CodecException {
        Shape s = shape(type);
        if (depth > MAX_DEPTH) throw new CodecException(type.getSimpleName() + " nested too deep");
        long count = in.uvarint();
        // counts are unsigned: one past 2^63 reads as negative here and must not pass for "fewer fields" (Jazzer found the list case)
        if (count < 0 || count > s.fields.length) {
            throw new CodecException(type.getSimpleName() + " record with " + count + " fields; this Cairn knows " + s.fields.length
                    + " (written by a newer Cairn?)");
        }
        Object[] args = new Object[s.fields.length];
        for (int i = 0; i < args.length; i++) args[i] = i < count ? readValue(in, s.fields[i], s, i, depth) : absent(s, i);
        return s.construct(args);
    }

    private static Object readValue(In in, Field f, Shape s, int field, int depth) throws CodecException {
        switch (f.kind) {
            case LONG: return in.svarint();
            case INT: {
                long v = in.svarint();
                if (v != (int) v) throw new CodecException(where(s, field) + ": " + v + " is not an int");
                return (int) v;
            }
            case BOOL: return in.bool(where(s, field));
            case STRING: return in.utf8(in.uvarint(), where(s, field));
            case BYTES: return in.take(in.uvarint(), where(s, field));
            case ENUM: return constant(f, in.utf8(in.uvarint(), where(s, field)), s, field);
            case LIST: {
                long n = in.uvarint();
                if (n < 0 || n > in.left()) throw new CodecException(where(s, field) + ": a list of " + Long.toUnsignedString(n) + " in " + in.left() + " bytes");
                Object[] out = new Object[(int) n];
                for (int i = 0; i < out.length; i++) out[i] = readValue(in, f.element, s, field, depth);
                return List.of(out);
            }
            default: return readRecord(in, f.raw, depth + 1);
        }
    }

    /** The value of a field an older record lacks (see the class comment). */
    private static Object absent(Shape s, int field) throws CodecException {
        return switch (s.fields[field].kind) {
            case LONG -> 0L;
            case INT -> 0;
            case BOOL -> false;
            case STRING -> "";
            case BYTES -> new byte[0];
            case LIST -> List.of();
            case ENUM, RECORD -> throw new CodecException(where(s, field)
                    + " is missing and has no default (an enum or a record): a new field of this kind needs a new encoding");
        };
    }

    private static Object constant(Field f, String name, Shape s, int field) throws CodecException {
        for (Object c : f.constants) if (((Enum<?>) c).name().equals(name)) return c;
        throw new CodecException(where(s, field) + ": no " + f.raw.getSimpleName() + " named " + name + " (written by a newer Cairn?)");
    }

    // ---------------------------------------------------------------- encoding 1 (read only)

    private static Object readRecord1(In in, Class<?> type, int depth) throws CodecException {
        Shape s = shape(type);
        if (depth > MAX_DEPTH) throw new CodecException(type.getSimpleName() + " nested too deep");
        int had = ENCODING_1_FIELDS.getOrDefault(type.getName(), s.fields.length);
        Object[] args = new Object[s.fields.length];
        for (int i = 0; i < args.length; i++) args[i] = i < had ? readValue1(in, s.fields[i], s, i, depth) : absent(s, i);
        return s.construct(args);
    }

    private static Object readValue1(In in, Field f, Shape s, int field, int depth) throws CodecException {
        switch (f.kind) {
            case LONG: return in.fixed(8, where(s, field)).getLong();
            case INT: return in.fixed(4, where(s, field)).getInt();
            case BOOL: return in.bool(where(s, field));
            case STRING: return in.utf8(in.count4(where(s, field)), where(s, field));
            case BYTES: return in.take(in.count4(where(s, field)), where(s, field));
            case ENUM: {
                int ordinal = in.byte1();
                List<String> names = ENCODING_1_ENUMS.get(f.raw.getName());
                if (names == null) throw new CodecException(where(s, field) + ": enum " + f.raw.getName() + " was never stored in encoding 1");
                if (ordinal >= names.size()) throw new CodecException(where(s, field) + ": " + f.raw.getSimpleName() + " ordinal " + ordinal);
                return constant(f, names.get(ordinal), s, field);
            }
            case LIST: {
                Object[] out = new Object[in.count4(where(s, field))];
                for (int i = 0; i < out.length; i++) out[i] = readValue1(in, f.element, s, field, depth);
                return List.of(out);
            }
            default: return readRecord1(in, f.raw, depth + 1);
        }
    }

    // ---------------------------------------------------------------- shapes

    private enum Kind { LONG, INT, BOOL, STRING, BYTES, ENUM, LIST, RECORD }

    /** How one field (or a list's element) is stored: decided once per record type. */
    private record Field(Kind kind, Class<?> raw, Field element, Object[] constants) {
        static Field of(Type t, String where) {
            Class<?> raw = t instanceof Class<?> c ? c : t instanceof ParameterizedType p ? (Class<?>) p.getRawType() : null;
            if (raw == long.class || raw == Long.class) return new Field(Kind.LONG, raw, null, null);
            if (raw == int.class || raw == Integer.class) return new Field(Kind.INT, raw, null, null);
            if (raw == boolean.class || raw == Boolean.class) return new Field(Kind.BOOL, raw, null, null);
            if (raw == String.class) return new Field(Kind.STRING, raw, null, null);
            if (raw == byte[].class) return new Field(Kind.BYTES, raw, null, null);
            if (raw != null && raw.isEnum()) return new Field(Kind.ENUM, raw, null, raw.getEnumConstants());
            if (raw == List.class && t instanceof ParameterizedType p) return new Field(Kind.LIST, raw, of(p.getActualTypeArguments()[0], where), null);
            if (raw != null && raw.isRecord()) return new Field(Kind.RECORD, raw, null, null); // its shape is looked up when used (types may nest)
            throw new IllegalArgumentException(where + ": " + t + " cannot be stored");
        }
    }

    private record Shape(Class<?> type, String[] names, Field[] fields, MethodHandle[] getters, MethodHandle constructor) {
        Object construct(Object[] args) throws CodecException {
            try {
                return (Object) constructor.invokeExact(args);
            } catch (IllegalArgumentException | AssertionError | ClassCastException e) {
                // a record's own checks refused the values: the bytes are damaged, or not this record
                throw new CodecException(type.getSimpleName() + " record refused by its constructor: " + e.getMessage(), e);
            } catch (Throwable t) {
                throw new IllegalStateException("constructing " + type.getSimpleName(), t);
            }
        }
    }

    private static final Map<Class<?>, Shape> SHAPES = new ConcurrentHashMap<>();

    private static Shape shape(Class<?> type) {
        Shape s = SHAPES.get(type);
        return s != null ? s : SHAPES.computeIfAbsent(type, StoreFormat::shapeOf);
    }

    private static Shape shapeOf(Class<?> type) {
        if (!type.isRecord()) throw new IllegalArgumentException(type.getName() + " is not a record");
        RecordComponent[] cs = type.getRecordComponents();
        String[] names = new String[cs.length];
        Field[] fields = new Field[cs.length];
        Class<?>[] raws = new Class<?>[cs.length];
        MethodHandle[] getters = new MethodHandle[cs.length];
        MethodHandles.Lookup lookup = MethodHandles.lookup();
        try {
            for (int i = 0; i < cs.length; i++) {
                names[i] = cs[i].getName();
                fields[i] = Field.of(cs[i].getGenericType(), type.getSimpleName() + "." + names[i]);
                raws[i] = cs[i].getType();
                var accessor = cs[i].getAccessor();
                accessor.setAccessible(true);
                Class<?> as = raws[i] == long.class || raws[i] == int.class ? raws[i] : Object.class;
                getters[i] = lookup.unreflect(accessor).asType(MethodType.methodType(as, Object.class));
            }
            Constructor<?> c = type.getDeclaredConstructor(raws);
            c.setAccessible(true);
            MethodHandle construct = lookup.unreflectConstructor(c).asSpreader(Object[].class, cs.length)
                    .asType(MethodType.methodType(Object.class, Object[].class));
            return new Shape(type, names, fields, getters, construct);
        } catch (ReflectiveOperationException e) {
            throw new IllegalArgumentException(type.getName() + " cannot be stored: " + e.getMessage(), e);
        }
    }

    private static String where(Shape s, int field) { return s.type.getSimpleName() + "." + s.names[field]; }

    // ---------------------------------------------------------------- bytes

    private static final class Out {
        byte[] bytes;
        int pos;

        Out(int size) { bytes = new byte[size]; }

        private void ensure(int n) {
            if (pos + n > bytes.length) bytes = Arrays.copyOf(bytes, Math.max(bytes.length * 2, pos + n));
        }

        void byte1(int v) {
            ensure(1);
            bytes[pos++] = (byte) v;
        }

        void uvarint(long v) {
            ensure(10);
            while ((v & ~0x7FL) != 0) {
                bytes[pos++] = (byte) ((v & 0x7F) | 0x80);
                v >>>= 7;
            }
            bytes[pos++] = (byte) v;
        }

        void svarint(long v) { uvarint((v << 1) ^ (v >> 63)); }

        /** UTF-8, length first; ASCII (every name and path in practice) straight into the buffer. */
        void string(String v) {
            int n = v.length();
            boolean ascii = true;
            for (int i = 0; i < n && ascii; i++) ascii = v.charAt(i) < 0x80;
            if (!ascii) {
                sized(v.getBytes(StandardCharsets.UTF_8));
                return;
            }
            uvarint(n);
            ensure(n);
            for (int i = 0; i < n; i++) bytes[pos++] = (byte) v.charAt(i);
        }

        void sized(byte[] b) {
            uvarint(b.length);
            ensure(b.length);
            System.arraycopy(b, 0, bytes, pos, b.length);
            pos += b.length;
        }
    }

    private static final class In {
        final byte[] b;
        int pos;
        final int encoding;

        In(byte[] b, int pos, int encoding) {
            this.b = b;
            this.pos = pos;
            this.encoding = encoding;
        }

        int left() { return b.length - pos; }

        int byte1() throws CodecException {
            if (pos >= b.length) throw new CodecException("record cut short");
            return b[pos++] & 0xff;
        }

        long uvarint() throws CodecException {
            long v = 0;
            for (int shift = 0; shift < 64; shift += 7) {
                int x = byte1();
                v |= (long) (x & 0x7F) << shift;
                if ((x & 0x80) == 0) return v;
            }
            throw new CodecException("varint longer than 10 bytes");
        }

        long svarint() throws CodecException {
            long u = uvarint();
            return (u >>> 1) ^ -(u & 1);
        }

        byte[] take(long n, String what) throws CodecException {
            if (n < 0 || n > left()) throw new CodecException(what + ": " + n + " bytes in " + left());
            byte[] out = Arrays.copyOfRange(b, pos, pos + (int) n);
            pos += (int) n;
            return out;
        }

        boolean bool(String what) throws CodecException {
            int b = byte1();
            if (b > 1) throw new CodecException(what + ": boolean byte " + b);
            return b == 1;
        }

        /** {@code n} bytes of UTF-8, checked (a damaged name is an error, not a name with U+FFFD in it). */
        String utf8(long n, String what) throws CodecException {
            if (n < 0 || n > left()) throw new CodecException(what + ": " + n + " bytes in " + left());
            int from = pos, to = pos + (int) n;
            pos = to;
            boolean ascii = true;
            for (int i = from; i < to && ascii; i++) ascii = b[i] >= 0;
            if (ascii) return new String(b, from, to - from, StandardCharsets.ISO_8859_1);
            try {
                CharBuffer chars = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                        .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(b, from, to - from));
                return chars.toString();
            } catch (CharacterCodingException e) {
                throw new CodecException(what + ": not UTF-8");
            }
        }

        ByteBuffer fixed(int n, String what) throws CodecException { return ByteBuffer.wrap(take(n, what)); }

        int count4(String what) throws CodecException {
            int n = fixed(4, what).getInt();
            if (n < 0 || n > left()) throw new CodecException(what + ": a length of " + n + " in " + left() + " bytes");
            return n;
        }
    }
}
