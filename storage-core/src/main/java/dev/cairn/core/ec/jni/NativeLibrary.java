package dev.cairn.core.ec.jni;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;
import java.util.TreeMap;

/**
 * Loads the JNI glue packed in the jar ({@code native/linux-x86_64/libcairn_NAME.so}) by copying it to a
 * temporary file. A library that is not packed (built without the headers) or that cannot link (the
 * system library is missing at run time) is reported, not thrown: the caller falls back.
 */
public final class NativeLibrary {
    private static final Map<String, String> FAILURES = new TreeMap<>();
    private static final Map<String, Boolean> LOADED = new TreeMap<>();

    private NativeLibrary() {}

    /** True if the library is loaded (now or before). */
    public static synchronized boolean load(String name) {
        Boolean done = LOADED.get(name);
        if (done != null) return done;
        boolean ok = false;
        String resource = "/native/" + platform() + "/libcairn_" + name + ".so";
        try (InputStream in = NativeLibrary.class.getResourceAsStream(resource)) {
            if (in == null) {
                FAILURES.put(name, "not built into this jar (" + resource + ")");
            } else {
                Path tmp = Files.createTempFile("libcairn_" + name, ".so");
                tmp.toFile().deleteOnExit();
                Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
                System.load(tmp.toAbsolutePath().toString());
                ok = true;
            }
        } catch (IOException | UnsatisfiedLinkError | SecurityException e) {
            FAILURES.put(name, e.getMessage());
        }
        LOADED.put(name, ok);
        return ok;
    }

    /** Why a library did not load, or null. */
    public static synchronized String failure(String name) { return FAILURES.get(name); }

    static String platform() {
        String os = System.getProperty("os.name", "").toLowerCase(java.util.Locale.ROOT);
        String arch = System.getProperty("os.arch", "");
        return (os.contains("linux") ? "linux" : os.replace(' ', '_')) + "-" + (arch.equals("amd64") ? "x86_64" : arch);
    }
}
