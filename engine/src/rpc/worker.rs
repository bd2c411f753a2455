//! The worker: the child process that drives one remote host for the coordinator (`bmoe
//! rpc-worker`, started by [`super::Coordinator`], never by hand). It owns the ggml-rpc
//! connection, so that when ggml-rpc aborts (a host that died mid-command, a failed handshake)
//! only this process dies, and the coordinator sees an end of stream instead of dying too.
//!
//! At start it reads the host's experts from the model file (each layer's share as one stack
//! per projection, so ggml-rpc's file cache on the server can key a large stack by its hash),
//! uploads them, optionally computes one expert on the host and on this machine and compares
//! the bits, then serves [`protocol::Compute`] requests: one small graph per layer over the
//! host's own stacks (`mul_mat_id` with the ids renumbered to the host's stack, as the
//! coordinator runs over its own), returning each routed expert's unweighted output.

use std::fs::File;
use std::io::{self, BufReader, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::time::{Duration, Instant};

use super::protocol::{self, Audit, Compute, Frame, Init, Reply};
use crate::arch::{Act, OAI_ALPHA, OAI_LIMIT};
use crate::error::{Error, Result};
use crate::ggml::backend::{self, Backend, BackendAllocator, BackendBuffer, RPC_TENSOR_BYTES};
use crate::ggml::{Context, GgmlType, Graph, Tensor, TensorSet};
use crate::model::ModelIndex;

/// How long the worker tries to reach the host before it says it cannot (ggml-rpc's own
/// connect has no timeout).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Run the worker over `io` (a socket to the coordinator, usually the process's standard
/// input); returns the process's exit code. Errors are reported to the coordinator as a frame
/// before the worker exits.
pub fn run(io: File) -> i32 {
    // The coordinator's death ends this process even when it is blocked in ggml-rpc's `recv`.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    // SAFETY: prctl with PR_SET_PDEATHSIG and a signal number has no memory effects.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
    }
    let mut out = match io.try_clone() {
        Ok(f) => f,
        Err(_) => return 2,
    };
    let mut input = BufReader::new(io);
    match serve(&mut input, &mut out) {
        Ok(()) => 0,
        Err(e) => {
            let msg = match e {
                Error::Rpc(m) => m,
                e => e.to_string(),
            };
            let _ = protocol::write_frame(&mut out, &Reply::Error(msg).encode());
            1
        }
    }
}

fn serve(input: &mut BufReader<File>, out: &mut File) -> Result<()> {
    let io_err = |e: io::Error| Error::Rpc(format!("talking to the coordinator: {e}"));
    let init = match protocol::read_frame(input).map_err(io_err)? {
        Some(Frame::Init(i)) => i,
        Some(_) => return Err(Error::Rpc("the first frame is not Init".into())),
        None => return Ok(()),
    };
    let index =
        ModelIndex::open(Path::new(&init.model)).map_err(|err| Error::Open { path: init.model.clone().into(), err })?;
    check_init(&index, &init)?;
    probe(&init.endpoint)?;
    // ggml aborts this process if the handshake fails (another protocol version): the
    // coordinator then reports the host lost with ggml's message.
    let mut host = Backend::rpc(&init.endpoint)?;
    let mut uploaded = 0u64;
    let weights = Weights::upload(&index, &init.experts, &host, &mut |layers, bytes| {
        uploaded = bytes;
        protocol::write_frame(out, &Reply::Progress { layers, bytes }.encode()).map_err(io_err)
    })?;
    let mut alloc = BackendAllocator::new(&host)?;
    let act = index.arch.recipe.act;
    let n_embd = index.shape().n_embd as u32;
    let audit =
        if init.audit { audit(&index, &init, &weights, &mut host, &mut alloc, act, n_embd)? } else { Audit::NotRun };
    protocol::write_frame(out, &Reply::Ready { bytes: uploaded, audit }.encode()).map_err(io_err)?;
    while let Some(frame) = protocol::read_frame(input).map_err(io_err)? {
        let Frame::Compute(c) = frame else { return Err(Error::Rpc("a frame other than Compute".into())) };
        let t0 = Instant::now();
        let before = alloc.buffer_size();
        let (y, mut cost) = weights.compute(&mut host, &mut alloc, act, &c)?;
        if alloc.buffer_size() != before {
            // The graph buffer grew: ALLOC_BUFFER and BUFFER_GET_BASE wait for replies, and
            // the old buffer is freed (FREE_BUFFER, no reply).
            cost.round_trips += 2;
            cost.sent += (1 + 8 + 12) + (1 + 8 + 8) + if before > 0 { 1 + 8 + 8 } else { 0 };
            cost.received += (8 + 16) + (8 + 8);
        }
        let reply = Reply::Result {
            sent: cost.sent,
            received: cost.received,
            round_trips: cost.round_trips,
            remote_s: t0.elapsed().as_secs_f64(),
            y,
        };
        protocol::write_frame(out, &reply.encode()).map_err(io_err)?;
    }
    out.flush().map_err(io_err)
}

/// The Init's experts against the model: one list per MoE layer, ids in range, none twice.
fn check_init(index: &ModelIndex, init: &Init) -> Result<()> {
    if init.experts.len() != index.layers.len() {
        return Err(Error::Rpc(format!(
            "{} layers of experts for a model of {} MoE layers",
            init.experts.len(),
            index.layers.len()
        )));
    }
    for (l, (e, layer)) in init.experts.iter().zip(&index.layers).enumerate() {
        let mut seen = vec![false; layer.n_expert as usize];
        for &x in e {
            if x >= layer.n_expert || std::mem::replace(&mut seen[x as usize], true) {
                return Err(Error::Rpc(format!("layer {l}: expert {x} out of range or repeated")));
            }
        }
    }
    Ok(())
}

/// Reach the host with a timeout first, so that a wrong address or a closed port is a
/// sentence, not ggml-rpc's abort or its connect without a timeout.
fn probe(endpoint: &str) -> Result<()> {
    let addrs: Vec<_> =
        endpoint.to_socket_addrs().map_err(|e| Error::Rpc(format!("cannot resolve {endpoint}: {e}")))?.collect();
    let mut last = None;
    for a in &addrs {
        match TcpStream::connect_timeout(a, CONNECT_TIMEOUT) {
            Ok(_) => return Ok(()),
            Err(e) => last = Some(e),
        }
    }
    Err(Error::Rpc(format!("cannot connect to {endpoint}: {}", last.map_or("no address".into(), |e| e.to_string()))))
}

/// One layer's stacks on a backend: gate, up, down (and their biases) of the host's experts.
#[derive(Clone, Copy, Debug)]
struct LayerStacks {
    proj: [usize; 3],
    bias: Option<[usize; 3]>,
    n: usize,
}

/// The host's experts, as stacks in one buffer of a backend.
#[derive(Debug)]
struct Weights {
    set: TensorSet,
    layers: Vec<Option<LayerStacks>>,
    _buf: Option<BackendBuffer>,
}

/// What one request cost on the network, counted from ggml-rpc's message formats.
#[derive(Clone, Copy, Debug, Default)]
struct Cost {
    sent: u64,
    received: u64,
    round_trips: u32,
}

/// `SET_TENSOR` of `n` bytes (no reply): the command, its size, the tensor, a cache flag, the
/// offset and the data.
fn set_tensor_bytes(n: usize) -> u64 {
    1 + 8 + RPC_TENSOR_BYTES + 1 + 8 + n as u64
}

impl Weights {
    /// The stacks of `experts[layer]` on `backend`, read from the model file and uploaded one
    /// (layer, projection) at a time; `progress(layers done, bytes sent)` after each layer.
    fn upload(
        index: &ModelIndex,
        experts: &[Vec<u32>],
        backend: &Backend,
        progress: &mut dyn FnMut(u32, u64) -> Result<()>,
    ) -> Result<Self> {
        let recipe = index.arch.recipe;
        let sh = index.shape();
        let mut set = TensorSet::no_alloc(6 * index.layers.len() + 1)?;
        let mut layers = Vec::with_capacity(index.layers.len());
        for (l, (ml, es)) in index.layers.iter().zip(experts).enumerate() {
            if es.is_empty() {
                layers.push(None);
                continue;
            }
            let n = es.len() as i64;
            let mut proj = [0usize; 3];
            for t in &ml.tensors {
                let slot = t.proj.slot()?;
                let d = t.proj.expert_dims(sh.n_embd, sh.n_ff_exp);
                proj[slot] = set.push(&format!("blk.{l}.{}.host", t.name), t.ty, &[d[0] as i64, d[1] as i64, n])?;
            }
            let bias = if recipe.expert_bias {
                let mut b = [0usize; 3];
                for (slot, name) in ["ffn_gate_exps", "ffn_up_exps", "ffn_down_exps"].iter().enumerate() {
                    let full = format!("blk.{l}.{name}.bias");
                    let t = index
                        .file
                        .tensor(&full)
                        .ok_or_else(|| Error::Tensor { name: full.clone(), why: "missing".into() })?;
                    b[slot] = set.push(&format!("{full}.host"), t.ty, &[t.dim(0) as i64, n])?;
                }
                Some(b)
            } else {
                None
            };
            layers.push(Some(LayerStacks { proj, bias, n: es.len() }));
        }
        if layers.iter().all(Option::is_none) {
            return Ok(Self { set, layers, _buf: None });
        }
        let buf = BackendBuffer::alloc_tensors(&set, backend)?;
        let files: Vec<File> = index
            .file
            .shards
            .iter()
            .map(|s| File::open(&s.path).map_err(|err| Error::File { path: s.path.clone(), err }))
            .collect::<Result<_>>()?;
        let read = |shard: usize, offset: u64, len: u64, into: &mut Vec<u8>| -> Result<()> {
            let at = into.len();
            into.resize(at + len as usize, 0);
            files[shard]
                .read_exact_at(&mut into[at..], offset)
                .map_err(|err| Error::File { path: index.file.shards[shard].path.clone(), err })?;
            drop_cache(&files[shard], offset, len);
            Ok(())
        };
        let mut bytes = 0u64;
        let mut data = Vec::new();
        for (l, (ml, es)) in index.layers.iter().zip(experts).enumerate() {
            let Some(st) = layers[l] else { continue };
            for (i, t) in ml.tensors.iter().enumerate() {
                data.clear();
                for &e in es {
                    let r = ml.range(i, e);
                    read(r.shard, r.offset, r.len, &mut data)?;
                }
                backend::tensor_set(set.get(st.proj[t.proj.slot()?]), &data, 0)?;
                bytes += data.len() as u64;
            }
            if let Some(b) = st.bias {
                for (slot, name) in ["ffn_gate_exps", "ffn_up_exps", "ffn_down_exps"].iter().enumerate() {
                    let t = index.file.tensor(&format!("blk.{l}.{name}.bias")).expect("checked above");
                    let row = t.row_bytes();
                    data.clear();
                    for &e in es {
                        read(t.shard, t.offset + u64::from(e) * row, row, &mut data)?;
                    }
                    backend::tensor_set(set.get(b[slot]), &data, 0)?;
                    bytes += data.len() as u64;
                }
            }
            progress(l as u32 + 1, bytes)?;
        }
        Ok(Self { set, layers, _buf: Some(buf) })
    }

    /// One request: each item's expert (by its index in the layer's stacks) on its row of the
    /// hidden states, as the coordinator's decoder computes its own (`get_rows` of the rows,
    /// `mul_mat_id` of gate and up, the activation, `mul_mat_id` of down, each with the
    /// expert's bias where the model has them); the outputs unweighted, in item order.
    fn compute(
        &self,
        host: &mut Backend,
        alloc: &mut BackendAllocator,
        act: Act,
        c: &Compute,
    ) -> Result<(Vec<f32>, Cost)> {
        let bad = |why: String| Error::Rpc(format!("layer {}: {why}", c.layer));
        let st = self
            .layers
            .get(c.layer as usize)
            .copied()
            .flatten()
            .ok_or_else(|| bad("no experts of this layer on this host".into()))?;
        let (e, rows, m) = (c.n_embd as usize, c.rows(), c.items.len());
        if m == 0 || rows == 0 {
            return Err(bad("an empty request".into()));
        }
        if let Some(&(i, r)) = c.items.iter().find(|&&(i, r)| i as usize >= st.n || r as usize >= rows) {
            return Err(bad(format!("item ({i}, {r}) outside {} experts and {rows} rows", st.n)));
        }
        let ctx = Context::new_no_alloc(64, 64)?;
        let mut g = ctx.new_graph(64)?;
        let input = |ty: GgmlType, ne: &[i64]| -> Result<Tensor<'_>> {
            let t = ctx.new_tensor(ty, ne)?;
            t.set_input();
            Ok(t)
        };
        let h = input(GgmlType::F32, &[e as i64, rows as i64])?;
        let rows_t = input(GgmlType::I32, &[m as i64])?;
        let ids = input(GgmlType::I32, &[1, m as i64])?;
        let y = self.experts(&ctx, &mut g, st, act, h, rows_t, ids)?;
        alloc.alloc(&g)?;
        let h_bytes: Vec<u8> = c.h.iter().flat_map(|x| x.to_le_bytes()).collect();
        let rows_bytes: Vec<u8> = c.items.iter().flat_map(|&(_, r)| (r as i32).to_le_bytes()).collect();
        let ids_bytes: Vec<u8> = c.items.iter().flat_map(|&(i, _)| (i as i32).to_le_bytes()).collect();
        backend::tensor_set(h, &h_bytes, 0)?;
        backend::tensor_set(rows_t, &rows_bytes, 0)?;
        backend::tensor_set(ids, &ids_bytes, 0)?;
        host.compute(&g)?;
        let out = backend::tensor_get(y)?;
        let (_, _, graph) = backend::rpc_graph_bytes(&g);
        let sets =
            set_tensor_bytes(h_bytes.len()) + set_tensor_bytes(rows_bytes.len()) + set_tensor_bytes(ids_bytes.len());
        let cost = Cost {
            sent: sets + graph + (1 + 8 + RPC_TENSOR_BYTES + 8 + 8),
            received: 8 + out.len() as u64,
            round_trips: 1,
        };
        Ok((out.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect(), cost))
    }

    /// The expert graph on the stacks `st`: `h` `[e, rows]`, `rows` I32 `[m]`, `ids` I32
    /// `[1, m]` → `[e, 1, m]`.
    #[allow(clippy::too_many_arguments)]
    fn experts<'a>(
        &'a self,
        ctx: &'a Context,
        g: &mut Graph<'a>,
        st: LayerStacks,
        act: Act,
        h: Tensor<'a>,
        rows: Tensor<'a>,
        ids: Tensor<'a>,
    ) -> Result<Tensor<'a>> {
        let e = h.ne()[0];
        let m = rows.ne()[0];
        let x = ctx.reshape(ctx.get_rows(h, rows)?, &[e, 1, m])?;
        let biased = |which: usize, y: Tensor<'a>| -> Result<Tensor<'a>> {
            match st.bias {
                Some(b) => Ok(ctx.add_id(y, self.set.get(b[which]), ids)?),
                None => Ok(y),
            }
        };
        let up = biased(1, ctx.mul_mat_id(self.set.get(st.proj[1]), x, ids)?)?;
        let gate = biased(0, ctx.mul_mat_id(self.set.get(st.proj[0]), x, ids)?)?;
        let a = match act {
            Act::SwigluOai => ctx.swiglu_oai(gate, up, OAI_ALPHA, OAI_LIMIT)?,
            Act::Swiglu => ctx.swiglu_split(gate, up)?,
        };
        let y = biased(2, ctx.mul_mat_id(self.set.get(st.proj[2]), a, ids)?)?;
        y.set_output();
        g.build_forward_expand(y)?;
        Ok(y)
    }
}

/// Compute the host's first expert of its first layer on the host and on this machine's CPU
/// (the coordinator's kernels) on the same input, and compare the bits: another ggml build or
/// other CPU features on the host (a dot product summed in another order) would make every
/// remote expert differ from what one host computes.
fn audit(
    index: &ModelIndex,
    init: &Init,
    weights: &Weights,
    host: &mut Backend,
    alloc: &mut BackendAllocator,
    act: Act,
    n_embd: u32,
) -> Result<Audit> {
    let Some(l) = init.experts.iter().position(|e| !e.is_empty()) else { return Ok(Audit::NotRun) };
    let mut one: Vec<Vec<u32>> = vec![Vec::new(); init.experts.len()];
    one[l] = vec![init.experts[l][0]];
    let mut cpu = Backend::cpu(1)?;
    let local = Weights::upload(index, &one, &cpu, &mut |_, _| Ok(()))?;
    let mut cpu_alloc = BackendAllocator::new(&cpu)?;
    // A fixed pseudo-random input in [-1, 1).
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let h: Vec<f32> = (0..n_embd)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        })
        .collect();
    let c = Compute { layer: l as u32, n_embd, h, items: vec![(0, 0)] };
    let (there, _) = weights.compute(host, alloc, act, &c)?;
    let (here, _) = local.compute(&mut cpu, &mut cpu_alloc, act, &c)?;
    let same = there.len() == here.len() && there.iter().zip(&here).all(|(a, b)| a.to_bits() == b.to_bits());
    Ok(if same { Audit::Equal } else { Audit::Differs })
}

/// Tell the kernel the bytes just read need not stay cached: the workers run on the
/// coordinator's machine, whose memory is for its own expert cache.
fn drop_cache(f: &File, offset: u64, len: u64) {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use std::os::fd::AsRawFd;
        // SAFETY: fadvise on an open descriptor has no memory effects; failure is harmless.
        unsafe { libc::posix_fadvise(f.as_raw_fd(), offset as i64, len as i64, libc::POSIX_FADV_DONTNEED) };
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let _ = (f, offset, len);
}
