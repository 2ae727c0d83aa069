package dev.cairn.master.namespace;

import dev.cairn.core.proto.CairnException;
import dev.cairn.core.proto.Status;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** Parsing and validation of absolute paths. */
public final class Paths {
    public static final int MAX_PATH_BYTES = 4096;
    public static final int MAX_NAME_BYTES = 255;

    private Paths() {}

    /** The components of an absolute path ("/" has none); BAD_REQUEST for anything malformed. */
    public static List<String> split(String path) {
        if (path == null || path.isEmpty() || path.charAt(0) != '/') throw bad(path, "must be absolute");
        if (path.getBytes(StandardCharsets.UTF_8).length > MAX_PATH_BYTES) throw bad(path, "longer than " + MAX_PATH_BYTES + " bytes");
        List<String> parts = new ArrayList<>();
        for (String p : path.split("/")) {
            if (p.isEmpty()) continue;
            if (p.equals(".") || p.equals("..")) throw bad(path, "'.' and '..' are not allowed");
            if (p.indexOf('\0') >= 0) throw bad(path, "contains NUL");
            if (p.getBytes(StandardCharsets.UTF_8).length > MAX_NAME_BYTES) throw bad(path, "a name is longer than " + MAX_NAME_BYTES + " bytes");
            parts.add(p);
        }
        return parts;
    }

    /** A single name within a directory: 1..255 bytes, no '/' or NUL, not "." or ".."; BAD_REQUEST otherwise. */
    public static String checkName(String name) {
        if (name == null || name.isEmpty()) throw bad(name, "an empty name");
        if (name.equals(".") || name.equals("..")) throw bad(name, "'.' and '..' are not allowed");
        if (name.indexOf('/') >= 0 || name.indexOf('\0') >= 0) throw bad(name, "a name may not contain '/' or NUL");
        if (name.getBytes(StandardCharsets.UTF_8).length > MAX_NAME_BYTES) throw bad(name, "a name is longer than " + MAX_NAME_BYTES + " bytes");
        return name;
    }

    private static CairnException bad(String path, String why) {
        return new CairnException(Status.BAD_REQUEST, "bad path '" + path + "': " + why);
    }
}
