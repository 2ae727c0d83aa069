package dev.cairn.nfs.v4;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.cairn.core.proto.Types.AttrChange;
import dev.cairn.nfs.xdr.XdrDecoder;
import dev.cairn.nfs.xdr.XdrEncoder;
import dev.cairn.nfs.xdr.XdrException;
import org.junit.jupiter.api.Test;

/** How a fattr4 a client sends to set attributes is judged (RFC 7530 §16.32, RFC 8881 §18.30). */
class FattrSettableTest {
    static final long NOW = 1_700_000_000_000L;

    /** A fattr4 naming {@code attrs} (all below 64) with these value bytes. */
    static XdrDecoder fattr(byte[] values, int... attrs) {
        int[] words = new int[2];
        for (int a : attrs) words[a / 32] |= 1 << (a % 32);
        XdrEncoder e = new XdrEncoder().writeInt(2).writeInt(words[0]).writeInt(words[1]).writeOpaque(values);
        return new XdrDecoder(e.toByteArray());
    }

    @Test void modeAndTimesAreTaken() {
        byte[] v = new XdrEncoder().writeInt(0640).writeInt(1).writeLong(981173106).writeInt(5_000_000).toByteArray();
        Fattr.Settable s = Fattr.decodeSettable(fattr(v, Fattr.MODE, Fattr.TIME_MODIFY_SET), NOW, false);
        assertThat(s.status()).isEqualTo(Nfs4Status.NFS4_OK);
        assertThat(s.change().mode()).isEqualTo(0640);
        assertThat(s.change().mtimeMillis()).isEqualTo(981173106_005L);
        assertThat(s.change().size()).isEqualTo(AttrChange.KEEP);
    }

    @Test void valuesMissingOrLeftOverAreBadXdr() {
        assertThatThrownBy(() -> Fattr.decodeSettable(fattr(new byte[0], Fattr.MODE), NOW, false)).isInstanceOf(XdrException.class);
        byte[] extra = new XdrEncoder().writeInt(0644).writeFixedOpaque("Garbage data".getBytes()).toByteArray();
        assertThatThrownBy(() -> Fattr.decodeSettable(fattr(extra, Fattr.MODE), NOW, false)).isInstanceOf(XdrException.class);
    }

    @Test void anImpossibleTimeIsInval() {
        byte[] v = new XdrEncoder().writeInt(1).writeLong(500_000_000).writeInt(1_000_000_000).toByteArray();
        assertThat(Fattr.decodeSettable(fattr(v, Fattr.TIME_MODIFY_SET), NOW, false).status()).isEqualTo(Nfs4Status.INVAL);
    }

    @Test void readOnlyIsInvalAndUnknownIsNotSupported() {
        byte[] bool = new XdrEncoder().writeBoolean(true).toByteArray();
        assertThat(Fattr.decodeSettable(fattr(bool, Fattr.LINK_SUPPORT), NOW, false).status()).isEqualTo(Nfs4Status.INVAL);
        assertThat(Fattr.decodeSettable(fattr(bool, 14 /* archive */), NOW, false).status()).isEqualTo(Nfs4Status.ATTRNOTSUPP);
    }

    @Test void writeOnlyAttributesAreNamed() {
        int[] words = new int[3];
        assertThat(Fattr.namesWriteOnly(words)).isFalse();
        words[1] = 1 << (Fattr.TIME_MODIFY_SET - 32);
        assertThat(Fattr.namesWriteOnly(words)).isTrue();
    }

    /** RFC 7530 §16.32.5: a size past the largest file is FBIG; 2^64-1 is a size like any other, not "leave it". */
    @Test void aSizePastTheLargestFileIsFbig() {
        for (long size : new long[] {-1L, Long.MIN_VALUE, dev.cairn.nfs.fs.ClusterFs.MAX_FILE_SIZE + 1}) {
            byte[] v = new XdrEncoder().writeLong(size).toByteArray();
            assertThat(Fattr.decodeSettable(fattr(v, Fattr.SIZE), NOW, false).status()).as("size %s", Long.toUnsignedString(size)).isEqualTo(Nfs4Status.FBIG);
        }
        byte[] largest = new XdrEncoder().writeLong(dev.cairn.nfs.fs.ClusterFs.MAX_FILE_SIZE).toByteArray();
        assertThat(Fattr.decodeSettable(fattr(largest, Fattr.SIZE), NOW, false).change().size()).isEqualTo(dev.cairn.nfs.fs.ClusterFs.MAX_FILE_SIZE);
    }

    /** An empty owner or group is no name at all: INVAL, where a name that maps to no id is BADOWNER. */
    @Test void anEmptyOwnerIsInvalAnUnknownOneBadowner() {
        assertThat(Fattr.decodeSettable(fattr(new XdrEncoder().writeString("").toByteArray(), Fattr.OWNER), NOW, false).status()).isEqualTo(Nfs4Status.INVAL);
        assertThat(Fattr.decodeSettable(fattr(new XdrEncoder().writeString("").toByteArray(), Fattr.OWNER_GROUP), NOW, false).status()).isEqualTo(Nfs4Status.INVAL);
        assertThat(Fattr.decodeSettable(fattr(new XdrEncoder().writeString("no-such-user").toByteArray(), Fattr.OWNER), NOW, false).status())
                .isEqualTo(Nfs4Status.BADOWNER);
    }

    /** A bitmap may name attributes past any this server knows (a newer minor version's): read, not a decoding error. */
    @Test void bitmapsOfManyWordsAreReadAndUnknownBitsRefusedOnlyWhenSet() {
        XdrEncoder five = new XdrEncoder().writeInt(5).writeInt(1 << Fattr.TYPE).writeInt(0).writeInt(0).writeInt(0).writeInt(1 << 3);
        int[] words = Fattr.readBitmap(new XdrDecoder(five.toByteArray()));
        assertThat(Fattr.isSet(words, Fattr.TYPE)).isTrue();
        assertThat(Fattr.isSet(words, 131)).isTrue();
        XdrEncoder set = new XdrEncoder().writeInt(5).writeInt(0).writeInt(0).writeInt(0).writeInt(0).writeInt(1 << 3).writeOpaque(new byte[0]);
        assertThat(Fattr.decodeSettable(new XdrDecoder(set.toByteArray()), NOW, false).status()).isEqualTo(Nfs4Status.ATTRNOTSUPP);
        XdrEncoder huge = new XdrEncoder().writeInt(Fattr.MAX_BITMAP_WORDS + 1);
        for (int i = 0; i <= Fattr.MAX_BITMAP_WORDS; i++) huge.writeInt(0);
        assertThatThrownBy(() -> Fattr.readBitmap(new XdrDecoder(huge.toByteArray()))).isInstanceOf(XdrException.class);
    }

    /** space_* and files_* (what df shows) come from the cluster's capacity; GETATTR answers only the bits asked. */
    @Test void spaceAttributesComeFromTheClusterAndUnknownBitsAreLeftOut() {
        int[] asked = new int[5];
        Fattr.set(asked, Fattr.SPACE_TOTAL);
        Fattr.set(asked, Fattr.SPACE_FREE);
        Fattr.set(asked, Fattr.FILES_TOTAL);
        asked[4] = 1 << 7; // attribute 135: none of ours
        var attr = new dev.cairn.core.proto.Types.FileAttr(5, dev.cairn.core.proto.Types.FileType.FILE, 10, 0, 65536,
                dev.cairn.core.proto.StorageClass.DEFAULT, 0644, 0, 0, 1, 0, 0, 1, 1, "");
        XdrEncoder e = new XdrEncoder();
        Fattr.encode(e, asked, attr, new Fattr.Context(1, 90, new byte[8], 1, () -> new dev.cairn.nfs.fs.ClusterFs.Space(3000, 1200)));
        XdrDecoder d = new XdrDecoder(e.toByteArray());
        int[] answered = Fattr.readBitmap(d);
        assertThat(Fattr.isSet(answered, 135)).isFalse();
        assertThat(Fattr.isSet(answered, Fattr.SPACE_TOTAL) && Fattr.isSet(answered, Fattr.SPACE_FREE) && Fattr.isSet(answered, Fattr.FILES_TOTAL)).isTrue();
        XdrDecoder v = new XdrDecoder(d.readOpaque(1024));
        assertThat(v.readLong()).as("files_total").isEqualTo(Fattr.FILES_LIMIT);
        assertThat(v.readLong()).as("space_free").isEqualTo(1200);
        assertThat(v.readLong()).as("space_total").isEqualTo(3000);
    }
}
