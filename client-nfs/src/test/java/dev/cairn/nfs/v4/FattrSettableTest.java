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
}
