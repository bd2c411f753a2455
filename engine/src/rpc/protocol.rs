//! The frames between the coordinator and the worker process that drives one remote host:
//! length-prefixed, little-endian, over a local socket. This is not a network protocol (the
//! network speaks ggml-rpc, between the worker and the host); it exists because ggml-rpc aborts
//! the process that holds a connection to a host that dies, so that process is a child whose
//! death the coordinator sees as an end of stream.
//!
//! A frame is `u32 length | u8 tag | payload` (the length counts the tag and the payload).
//! Everything read is checked (lengths against what remains, counts against the frame, a frame
//! against [`MAX_FRAME`]): a worker that dies mid-frame or writes garbage is a lost host, never a
//! wrong number.

use std::io::{self, Read, Write};

/// The largest frame either side accepts (a prefill's hidden states for a wide micro-batch
/// stay far below it).
pub const MAX_FRAME: usize = 1 << 30;

/// Frame tags.
mod tag {
    pub const INIT: u8 = 1;
    pub const COMPUTE: u8 = 2;
    pub const PROGRESS: u8 = 10;
    pub const READY: u8 = 11;
    pub const RESULT: u8 = 12;
    pub const ERROR: u8 = 13;
}

/// What the worker is to do, sent once after it starts.
#[derive(Clone, Debug, PartialEq)]
pub struct Init {
    /// The model file (the first shard), which the worker reads the host's experts from.
    pub model: String,
    /// `host:port` of the ggml RPC server.
    pub endpoint: String,
    /// Per MoE layer, the experts the host holds, in the order of its stacks.
    pub experts: Vec<Vec<u32>>,
    /// Compute one expert on the host and on this machine and compare the bits before serving.
    pub audit: bool,
}

/// One layer's work for the host: the hidden states of the rows it needs and, per routed
/// expert-row pair, the expert's index in the host's stack and the row.
#[derive(Clone, Debug, PartialEq)]
pub struct Compute {
    pub layer: u32,
    pub n_embd: u32,
    /// `rows × n_embd` F32, row-major.
    pub h: Vec<f32>,
    /// (stack index, row of `h`), in the order the outputs come back.
    pub items: Vec<(u32, u32)>,
}

/// How the start-up check of the host's bits came out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Audit {
    NotRun,
    Equal,
    /// The host's output differed from this machine's: another ggml build or other CPU features.
    Differs,
}

/// What the worker says.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    /// Upload in progress: layers done, bytes sent so far.
    Progress { layers: u32, bytes: u64 },
    /// Every expert uploaded; the audit's outcome.
    Ready { bytes: u64, audit: Audit },
    /// A [`Compute`]'s outputs (`items × n_embd` F32, in item order) and what it cost on the
    /// network: bytes ggml-rpc sent and received, commands that waited for a reply, and the
    /// seconds from the request to the reply inside the worker.
    Result { sent: u64, received: u64, round_trips: u32, remote_s: f64, y: Vec<f32> },
    /// The worker cannot go on (it exits after sending this).
    Error(String),
}

/// Writes frames.
#[derive(Debug, Default)]
pub struct Encoder(Vec<u8>);

impl Encoder {
    fn new(tag: u8) -> Self {
        let mut v = Vec::with_capacity(64);
        v.extend_from_slice(&[0u8; 4]);
        v.push(tag);
        Encoder(v)
    }
    fn u8(&mut self, x: u8) -> &mut Self {
        self.0.push(x);
        self
    }
    fn u32(&mut self, x: u32) -> &mut Self {
        self.0.extend_from_slice(&x.to_le_bytes());
        self
    }
    fn u64(&mut self, x: u64) -> &mut Self {
        self.0.extend_from_slice(&x.to_le_bytes());
        self
    }
    fn f64(&mut self, x: f64) -> &mut Self {
        self.0.extend_from_slice(&x.to_le_bytes());
        self
    }
    fn str(&mut self, s: &str) -> &mut Self {
        self.u32(s.len() as u32);
        self.0.extend_from_slice(s.as_bytes());
        self
    }
    fn f32s(&mut self, v: &[f32]) -> &mut Self {
        self.u32(v.len() as u32);
        self.0.reserve(v.len() * 4);
        for x in v {
            self.0.extend_from_slice(&x.to_le_bytes());
        }
        self
    }
    fn finish(mut self) -> Vec<u8> {
        let len = (self.0.len() - 4) as u32;
        self.0[..4].copy_from_slice(&len.to_le_bytes());
        self.0
    }
}

impl Init {
    /// The frame.
    pub fn encode(&self) -> Vec<u8> {
        let mut e = Encoder::new(tag::INIT);
        e.str(&self.model).str(&self.endpoint).u8(u8::from(self.audit)).u32(self.experts.len() as u32);
        for l in &self.experts {
            e.u32(l.len() as u32);
            for &x in l {
                e.u32(x);
            }
        }
        e.finish()
    }
}

impl Compute {
    /// The frame.
    pub fn encode(&self) -> Vec<u8> {
        let mut e = Encoder::new(tag::COMPUTE);
        e.u32(self.layer).u32(self.n_embd).f32s(&self.h).u32(self.items.len() as u32);
        for &(i, r) in &self.items {
            e.u32(i).u32(r);
        }
        e.finish()
    }

    /// Rows of `h`.
    pub fn rows(&self) -> usize {
        self.h.len() / (self.n_embd.max(1) as usize)
    }
}

impl Reply {
    /// The frame.
    pub fn encode(&self) -> Vec<u8> {
        match self {
            Reply::Progress { layers, bytes } => {
                let mut e = Encoder::new(tag::PROGRESS);
                e.u32(*layers).u64(*bytes);
                e.finish()
            }
            Reply::Ready { bytes, audit } => {
                let mut e = Encoder::new(tag::READY);
                e.u64(*bytes).u8(match audit {
                    Audit::NotRun => 0,
                    Audit::Equal => 1,
                    Audit::Differs => 2,
                });
                e.finish()
            }
            Reply::Result { sent, received, round_trips, remote_s, y } => {
                let mut e = Encoder::new(tag::RESULT);
                e.u64(*sent).u64(*received).u32(*round_trips).f64(*remote_s).f32s(y);
                e.finish()
            }
            Reply::Error(msg) => {
                let mut e = Encoder::new(tag::ERROR);
                e.str(msg);
                e.finish()
            }
        }
    }
}

/// A frame's payload, read with bounds checks.
#[derive(Debug)]
pub struct Decoder<'a> {
    b: &'a [u8],
}

/// A malformed frame.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed frame from the worker: {0}")]
pub struct Malformed(pub String);

impl<'a> Decoder<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], Malformed> {
        if n > self.b.len() {
            return Err(Malformed(format!("{n} bytes wanted, {} left", self.b.len())));
        }
        let (a, rest) = self.b.split_at(n);
        self.b = rest;
        Ok(a)
    }
    fn u8(&mut self) -> Result<u8, Malformed> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Result<u32, Malformed> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }
    fn u64(&mut self) -> Result<u64, Malformed> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }
    fn f64(&mut self) -> Result<f64, Malformed> {
        Ok(f64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }
    fn str(&mut self) -> Result<String, Malformed> {
        let n = self.u32()? as usize;
        String::from_utf8(self.take(n)?.to_vec()).map_err(|_| Malformed("a string that is not UTF-8".into()))
    }
    fn count(&mut self, each: usize) -> Result<usize, Malformed> {
        let n = self.u32()? as usize;
        if n.saturating_mul(each) > self.b.len() {
            return Err(Malformed(format!("{n} items of {each} bytes, {} bytes left", self.b.len())));
        }
        Ok(n)
    }
    fn f32s(&mut self) -> Result<Vec<f32>, Malformed> {
        let n = self.count(4)?;
        Ok(self.take(n * 4)?.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes"))).collect())
    }
    fn end(&self) -> Result<(), Malformed> {
        if self.b.is_empty() {
            Ok(())
        } else {
            Err(Malformed(format!("{} bytes after the end", self.b.len())))
        }
    }
}

/// A decoded frame of either direction.
#[derive(Debug, PartialEq)]
pub enum Frame {
    Init(Init),
    Compute(Compute),
    Reply(Reply),
}

/// Decode one frame's `tag` and `payload` (what follows the length).
///
/// # Errors
/// [`Malformed`] for an unknown tag, a short or overlong payload, counts that do not fit.
pub fn decode(tag: u8, payload: &[u8]) -> Result<Frame, Malformed> {
    let mut d = Decoder { b: payload };
    let f = match tag {
        tag::INIT => {
            let model = d.str()?;
            let endpoint = d.str()?;
            let audit = d.u8()? != 0;
            let n = d.count(4)?;
            let mut experts = Vec::with_capacity(n);
            for _ in 0..n {
                let m = d.count(4)?;
                experts.push((0..m).map(|_| d.u32()).collect::<Result<Vec<_>, _>>()?);
            }
            Frame::Init(Init { model, endpoint, experts, audit })
        }
        tag::COMPUTE => {
            let layer = d.u32()?;
            let n_embd = d.u32()?;
            let h = d.f32s()?;
            if n_embd == 0 || h.len() % n_embd as usize != 0 {
                return Err(Malformed(format!("{} values are not rows of {n_embd}", h.len())));
            }
            let m = d.count(8)?;
            let items = (0..m).map(|_| Ok((d.u32()?, d.u32()?))).collect::<Result<Vec<_>, Malformed>>()?;
            Frame::Compute(Compute { layer, n_embd, h, items })
        }
        tag::PROGRESS => Frame::Reply(Reply::Progress { layers: d.u32()?, bytes: d.u64()? }),
        tag::READY => {
            let bytes = d.u64()?;
            let audit = match d.u8()? {
                0 => Audit::NotRun,
                1 => Audit::Equal,
                2 => Audit::Differs,
                x => return Err(Malformed(format!("audit {x}"))),
            };
            Frame::Reply(Reply::Ready { bytes, audit })
        }
        tag::RESULT => Frame::Reply(Reply::Result {
            sent: d.u64()?,
            received: d.u64()?,
            round_trips: d.u32()?,
            remote_s: d.f64()?,
            y: d.f32s()?,
        }),
        tag::ERROR => Frame::Reply(Reply::Error(d.str()?)),
        t => return Err(Malformed(format!("unknown tag {t}"))),
    };
    d.end()?;
    Ok(f)
}

/// The length of the frame whose first four bytes are `head`.
///
/// # Errors
/// [`Malformed`] for an empty or overlong frame.
pub fn frame_len(head: [u8; 4]) -> Result<usize, Malformed> {
    let n = u32::from_le_bytes(head) as usize;
    if n == 0 || n > MAX_FRAME {
        return Err(Malformed(format!("a frame of {n} bytes")));
    }
    Ok(n)
}

/// Read one whole frame from a blocking reader (the worker's side). `Ok(None)` at a clean end
/// of stream before a frame starts.
///
/// # Errors
/// The reader's, or [`io::ErrorKind::InvalidData`] for a malformed frame.
pub fn read_frame(r: &mut impl Read) -> io::Result<Option<Frame>> {
    let mut head = [0u8; 4];
    match r.read_exact(&mut head) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let n = frame_len(head).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
    let mut body = vec![0u8; n];
    r.read_exact(&mut body)?;
    decode(body[0], &body[1..]).map(Some).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// Write a frame to a blocking writer (the worker's side).
///
/// # Errors
/// The writer's.
pub fn write_frame(w: &mut impl Write, frame: &[u8]) -> io::Result<()> {
    w.write_all(frame)?;
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(frame: Vec<u8>) -> Frame {
        read_frame(&mut frame.as_slice()).unwrap().unwrap()
    }

    #[test]
    fn every_frame_round_trips() {
        let init = Init {
            model: "m.gguf".into(),
            endpoint: "127.0.0.1:1".into(),
            experts: vec![vec![1, 5], vec![]],
            audit: true,
        };
        assert_eq!(round(init.encode()), Frame::Init(init));
        let c = Compute { layer: 3, n_embd: 2, h: vec![1.0, -2.5, 0.0, 3.0], items: vec![(0, 1), (4, 0)] };
        assert_eq!(c.rows(), 2);
        assert_eq!(round(c.encode()), Frame::Compute(c));
        for r in [
            Reply::Progress { layers: 2, bytes: 7 },
            Reply::Ready { bytes: 9, audit: Audit::Differs },
            Reply::Result { sent: 1, received: 2, round_trips: 3, remote_s: 0.5, y: vec![f32::MIN_POSITIVE, -0.0] },
            Reply::Error("out of memory".into()),
        ] {
            assert_eq!(round(r.encode()), Frame::Reply(r));
        }
    }

    #[test]
    fn bits_survive_exactly() {
        let y = vec![f32::from_bits(0x7fc0_0001), f32::from_bits(1), 1.0e-38];
        let Frame::Reply(Reply::Result { y: back, .. }) =
            round(Reply::Result { sent: 0, received: 0, round_trips: 0, remote_s: 0.0, y: y.clone() }.encode())
        else {
            panic!("a result")
        };
        assert_eq!(
            back.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            y.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
        );
    }

    #[test]
    fn malformed_frames_are_refused() {
        // A count larger than the payload, an unknown tag, trailing bytes, an empty frame.
        let mut f = Reply::Result { sent: 0, received: 0, round_trips: 0, remote_s: 0.0, y: vec![1.0] }.encode();
        let at = f.len() - 8;
        f[at..at + 4].copy_from_slice(&1000u32.to_le_bytes());
        assert!(read_frame(&mut f.as_slice()).is_err());
        assert!(decode(99, &[]).is_err());
        assert!(decode(tag::PROGRESS, &[0; 13]).is_err());
        assert!(frame_len([0; 4]).is_err());
        assert!(frame_len((MAX_FRAME as u32 + 1).to_le_bytes()).is_err());
        // Rows that are not whole.
        let c = Compute { layer: 0, n_embd: 3, h: vec![1.0; 4], items: vec![] };
        assert!(read_frame(&mut c.encode().as_slice()).is_err());
        // A stream that ends cleanly before a frame, and one that ends inside a frame.
        assert!(read_frame(&mut [].as_slice()).unwrap().is_none());
        let f = Reply::Error("x".into()).encode();
        assert!(read_frame(&mut &f[..f.len() - 1]).is_err());
    }
}
