package dev.cairn.nfs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.cairn.nfs.NfsTestCalls.OpCall;
import dev.cairn.nfs.NfsTestCalls.Reply;
import dev.cairn.nfs.rpc.Credentials;
import dev.cairn.nfs.v4.Nfs4Status;
import dev.cairn.nfs.v4.Op;
import dev.cairn.nfs.xdr.XdrEncoder;
import org.junit.jupiter.api.Test;

class ExportsTest {
    @Test void theFirstMatchingRuleApplies() {
        Exports e = Exports.parse("127.0.0.1 rw no_root_squash; 10.1.0.0/16 ro; 10.0.0.0/8 rw root_squash anonuid=99 anongid=98");
        assertThat(e.match("127.0.0.1").readOnly()).isFalse();
        assertThat(e.match("127.0.0.2")).isNull();
        assertThat(e.match("10.1.200.3").readOnly()).isTrue();
        assertThat(e.match("10.1.200.3").rootSquash()).as("root_squash is the default").isTrue();
        Exports.Rule wide = e.match("10.200.0.1");
        assertThat(wide.readOnly()).isFalse();
        Credentials root = wide.squash(new Credentials.Sys(0, "m", 0, 0, new int[] {0, 5}));
        assertThat(root.uid()).isEqualTo(99);
        assertThat(root.gid()).isEqualTo(98);
        assertThat(root.gids()).isEmpty();
        Credentials user = new Credentials.Sys(0, "m", 1000, 100, new int[0]);
        assertThat(wide.squash(user)).isSameAs(user);
        assertThat(e.match("11.0.0.1")).isNull();
        assertThat(e.match("::1")).as("IPv6 matches only *").isNull();
        assertThat(Exports.parse("*").match("::1")).isNotNull();
        assertThat(e.match("::ffff:10.1.0.1").readOnly()).isTrue();
        assertThat(Exports.parse(Exports.DEFAULT).match("127.0.0.1").rootSquash()).isFalse();
        assertThat(Exports.parse("0.0.0.0/0 ro").match("192.168.1.1").readOnly()).isTrue();
    }

    @Test void mistakesAreNamed() {
        assertThatThrownBy(() -> Exports.parse("")).hasMessageContaining("no export rule");
        assertThatThrownBy(() -> Exports.parse("10.0.0.0/33")).hasMessageContaining("prefix 33 is over 32");
        assertThatThrownBy(() -> Exports.parse("10.0.0/8")).hasMessageContaining("not an IPv4 address");
        assertThatThrownBy(() -> Exports.parse("10.0.0.256")).hasMessageContaining("not an IPv4 address");
        assertThatThrownBy(() -> Exports.parse("10.0.0.1 rw; 10.0.0.2 sync")).hasMessageContaining("\"10.0.0.2 sync\": unknown option \"sync\"");
        assertThatThrownBy(() -> Exports.parse("* anonuid=x")).hasMessageContaining("\"x\" is not a number");
        assertThatThrownBy(() -> Exports.parse("* anonuid=-1")).hasMessageContaining("negative");
    }

    @Test void anUnexportedClientGetsNoHandleAndAReadOnlyOneChangesNothing() {
        NfsTestCalls nfs = new NfsTestCalls(5, Exports.parse("127.0.0.2 ro"));
        // 4.0 needs no session: the rules show directly
        Reply denied = nfs.compound(0, OpCall.of(Op.PUTROOTFH));
        assertThat(denied.status()).as("127.0.0.1 is not in the list").isEqualTo(Nfs4Status.ACCESS);
        NfsTestCalls ro = new NfsTestCalls(5, Exports.parse("127.0.0.1 ro"));
        assertThat(ro.compound(0, OpCall.of(Op.PUTROOTFH)).status()).isEqualTo(Nfs4Status.NFS4_OK);
        XdrEncoder mkdir = new XdrEncoder().writeInt(2).writeString("d").writeInt(0).writeOpaque(new byte[0]);
        Reply refused = ro.compound(0, OpCall.of(Op.PUTROOTFH), new OpCall(Op.CREATE, mkdir));
        assertThat(refused.status()).isEqualTo(Nfs4Status.ROFS);
        Reply remove = ro.compound(0, OpCall.of(Op.PUTROOTFH), new OpCall(Op.REMOVE, new XdrEncoder().writeString("x")));
        assertThat(remove.status()).isEqualTo(Nfs4Status.ROFS);
    }
}
