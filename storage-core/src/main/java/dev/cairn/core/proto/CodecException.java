package dev.cairn.core.proto;

/** A frame or record that cannot be decoded: unknown tag, truncated, over a limit, or trailing bytes. */
public final class CodecException extends Exception implements dev.cairn.core.async.Unexpected.Expected {
    public CodecException(String message) { super(message); }

    public CodecException(String message, Throwable cause) { super(message, cause); }
}
