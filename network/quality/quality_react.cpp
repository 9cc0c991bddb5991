// The quality engine (quality_engine.hpp): reactions in pipes and tanks and the tanks' mixing
// models, as EPANET 2.3.5's qualreact.c computes them (same order of operations).
#include <algorithm>
#include <cmath>

#include "network/quality/quality_engine.hpp"

namespace cgs::net {
namespace {

constexpr double kTiny = 1.e-6;  // EPANET's TINY
constexpr double kBig = 1.e10;   // EPANET's BIG
constexpr double kPi = 3.14159265358979323846;
constexpr double kSecondsPerDay = 86400.0;  // EPANET's SECperDAY

double sign(double x) { return x < 0 ? -1.0 : 1.0; }  // EPANET's SGN (1 at 0)

}  // namespace

// EPANET's ratecoeffs: each pipe's wall rate coefficient from the period's flow.
void QualityEngine::rate_coefficients() {
  for (int k = 0; k < nl_; ++k) wall_rate_[k] = in_.wall[k] != 0.0 ? pipe_rate(k) : 0.0;
  std::fill(rate_coeff_.begin(), rate_coeff_.end(), 0.0);
}

// EPANET's piperate: the mass transfer coefficient (zero-order wall reactions) or the apparent
// first-order wall coefficient, from the Sherwood number of the pipe's flow (Notter-Sleicher when
// turbulent, Graetz when laminar, 2 when stagnant).
double QualityEngine::pipe_rate(int k) const {
  const Link& link = net_.links[k];
  const double d = link.diameter, ucf = net_.units.length;
  if (schmidt_ == 0.0) return in_.wall_order == 0.0 ? kBig : in_.wall[k] * (4.0 / d) / ucf;
  const double a = kPi * d * d / 4.0;
  const double u = std::abs(flow_[k]) / a;
  const double re = u * d / net_.options.viscosity;
  double sh;
  if (re < 1.0) {
    sh = 2.0;
  } else if (re >= 2300.0) {
    sh = 0.0149 * std::pow(re, 0.88) * std::pow(schmidt_, 0.333);
  } else {
    const double y = d / link.length * re * schmidt_;
    sh = 3.65 + 0.0668 * y / (1.0 + 0.04 * std::pow(y, 0.667));
  }
  const double kf = sh * in_.diffusivity / d;
  if (in_.wall_order == 0.0) return kf;
  double kw = in_.wall[k] / ucf;
  kw = (4.0 / d) * kw * kf / (kf + std::abs(kw));
  return kw;
}

// EPANET's reactpipes, with each pipe's volume-weighted rate (its PipeRateCoeff, CHEMICAL only).
void QualityEngine::react_pipes(long dt) {
  const bool chemical = in_.type == QualityType::chemical;
  for (const int k : pipes_) {
    double rsum = 0.0, vsum = 0.0;
    for (int s = first_[k]; s >= 0; s = seg_[s].prev) {
      const double c = seg_[s].c;
      seg_[s].c = pipe_react(k, c, seg_[s].v, dt);
      balance_.reacted += (c - seg_[s].c) * seg_[s].v;
      if (chemical) {
        rsum += std::abs(seg_[s].c - c) * seg_[s].v;
        vsum += seg_[s].v;
      }
    }
    rate_coeff_[k] = vsum > 0.0 ? rsum / vsum / static_cast<double>(dt) * kSecondsPerDay : 0.0;
  }
}

void QualityEngine::react_tanks(long dt) {
  for (const int n : tanks_) {
    for (int s = first_[chain(n)]; s >= 0; s = seg_[s].prev) {
      const double c = seg_[s].c;
      seg_[s].c = tank_react(c, seg_[s].v, in_.tank_bulk[n], dt);
      balance_.reacted += (c - seg_[s].c) * seg_[s].v;
    }
  }
}

double QualityEngine::pipe_react(int k, double c, double v, long dt) {
  if (in_.type == QualityType::age) return emax(0.0, c + static_cast<double>(dt) / 3600.0);
  const double rbulk = bulk_rate(c, in_.bulk[k], in_.bulk_order) * bulk_ucf_;
  const double rwall = wall_rate(c, diameter_[k], in_.wall[k], wall_rate_[k]);
  const double dcbulk = rbulk * static_cast<double>(dt), dcwall = rwall * static_cast<double>(dt);
  if (count_reactions_) {
    reactions_.bulk += std::abs(dcbulk) * v;
    reactions_.wall += std::abs(dcwall) * v;
  }
  return emax(0.0, c + (dcbulk + dcwall));
}

double QualityEngine::tank_react(double c, double v, double kb, long dt) {
  double dc;
  if (in_.type == QualityType::age) {
    dc = static_cast<double>(dt) / 3600.0;
  } else {
    dc = bulk_rate(c, kb, in_.tank_order) * tank_ucf_ * static_cast<double>(dt);
    if (count_reactions_) reactions_.tank += std::abs(dc) * v;
  }
  return emax(0.0, c + dc);
}

// EPANET's bulkrate: kb times the concentration potential of order n (zero order: 1;
// Michaelis-Menten for n < 0; with a limiting potential, the distance to it).
double QualityEngine::bulk_rate(double c, double kb, double order) const {
  const double limit = in_.limiting_potential;
  if (order == 0.0) {
    c = 1.0;
  } else if (order < 0.0) {
    double c1 = limit + sign(kb) * c;
    if (std::abs(c1) < kTiny) c1 = sign(c1) * kTiny;
    c = c / c1;
  } else {
    const double c1 = limit == 0.0 ? c : emax(0.0, sign(kb) * (limit - c));
    if (order == 1.0)
      c = c1;
    else if (order == 2.0)
      c = c1 * c;
    else
      c = c1 * std::pow(emax(0.0, c), order - 1.0);
  }
  if (c < 0) c = 0;
  return kb * c;
}

// EPANET's wallrate: first order, c times the apparent coefficient; zero order, the wall
// coefficient held to what mass transfer can carry.
double QualityEngine::wall_rate(double c, double d, double kw, double kf) const {
  if (kw == 0.0 || d == 0.0) return 0.0;
  if (in_.wall_order != 0.0) return c * kf;
  kf = sign(kw) * c * kf;
  const double ucf = net_.units.length;
  kw = kw * (ucf * ucf);
  if (std::abs(kf) < std::abs(kw)) kw = kf;
  return kw * 4.0 / d;
}

double QualityEngine::mix_tank(int n, double volin, double massin, double volout) {
  const double vnet = volin - volout;
  switch (in_.mixing[n]) {
    case MixModel::mixed: mix_complete(n, volin, massin, vnet); break;
    case MixModel::two_compartment: mix_two_compartment(n, volin, massin, vnet); break;
    case MixModel::fifo: mix_fifo(n, volin, massin, vnet); break;
    case MixModel::lifo: mix_lifo(n, volin, massin, vnet); break;
  }
  return tank_c_[n];
}

void QualityEngine::mix_complete(int n, double vin, double win, double vnet) {
  const int s = first_[chain(n)];
  if (s < 0) return;
  Segment& seg = seg_[s];
  const double vnew = seg.v + vin;
  if (vnew > 0.0) seg.c = (seg.c * seg.v + win) / vnew;
  seg.v += vnet;
  seg.v = emax(0.0, seg.v);
  tank_c_[n] = seg.c;
  const double vmax = net_.nodes[n].max_volume;
  if (seg.v > vmax) {  // overflow: its mass leaves the network
    balance_.outflow += (seg.v - vmax) * tank_c_[n];
    seg.v = vmax;
  }
}

void QualityEngine::mix_two_compartment(int n, double vin, double win, double vnet) {
  const int k = chain(n);
  if (last_[k] < 0 || first_[k] < 0) return;
  Segment& mix = seg_[last_[k]];
  Segment& stag = seg_[first_[k]];
  const double vmax = net_.nodes[n].max_volume;
  const double vmz = in_.mixing_fraction[n] * vmax;
  double vt = 0.0;
  if (vnet > 0.0) {
    vt = emax(0.0, mix.v + vnet - vmz);
    if (vin > 0.0) mix.c = (mix.c * mix.v + win) / (mix.v + vin);
    if (vt > 0.0) stag.c = (stag.c * stag.v + mix.c * vt) / (stag.v + vt);
  } else if (vnet < 0.0) {
    if (stag.v > 0.0) vt = emin(stag.v, -vnet);
    if (vin + vt > 0.0) mix.c = (mix.c * mix.v + win + stag.c * vt) / (mix.v + vin + vt);
  }
  if (vt > 0.0) {
    if (vnet > 0.0) {
      mix.v = vmz;
      stag.v += vt;
      const double vsz = vmax - vmz;
      if (stag.v > vsz) {
        balance_.outflow += (stag.v - vsz) * stag.c;
        stag.v = vsz;
      }
    } else {
      stag.v = emax(0.0, stag.v - vt);
      mix.v = vmz + vt + vnet;
    }
  } else {
    mix.v += vnet;
    mix.v = emin(mix.v, vmz);
    mix.v = emax(0.0, mix.v);
    if (vmz - mix.v > 0.0) stag.v = 0.0;
  }
  tank_c_[n] = mix.c;
}

// The FIFO and LIFO tanks' withdrawal from the chain's first segments (the last one gives all
// that is left to take); the volume taken, its mass in *taken.
double QualityEngine::withdraw(int k, double volume, double* taken) {
  double vsum = 0.0, wsum = 0.0;
  while (volume > 0.0) {
    const int s = first_[k];
    if (s < 0) break;
    double vseg = emin(seg_[s].v, volume);
    if (s == last_[k]) vseg = volume;
    vsum += vseg;
    wsum += seg_[s].c * vseg;
    volume -= vseg;
    if (volume >= 0.0 && vseg >= seg_[s].v) {
      if (seg_[s].prev >= 0) free_segment(k);
    } else {
      seg_[s].v -= vseg;
    }
  }
  *taken = wsum;
  return vsum;
}

void QualityEngine::mix_fifo(int n, double vin, double win, double vnet) {
  const int k = chain(n);
  if (last_[k] < 0 || first_[k] < 0) return;
  if (vin > 0.0) {
    const double cin = win / vin;
    Segment& last = seg_[last_[k]];
    if (std::abs(last.c - cin) < in_.tolerance)
      last.v += vin;
    else
      add_segment(k, vin, cin);
  }
  const bool full = volume_[n] >= net_.nodes[n].max_volume && vnet > 0.0;
  double wsum = 0.0;
  const double vsum = withdraw(k, full ? vin : vin - vnet, &wsum);
  if (vsum > 0.0)
    tank_c_[n] = wsum / vsum;
  else
    tank_c_[n] = seg_[first_[k]].c;  // the chain keeps its last segment
  if (full) balance_.outflow += vnet * tank_c_[n];
}

void QualityEngine::mix_lifo(int n, double vin, double win, double vnet) {
  const int k = chain(n);
  if (last_[k] < 0 || first_[k] < 0) return;
  const double cin = vin > 0.0 ? win / vin : 0.0;
  tank_c_[n] = seg_[last_[k]].c;
  if (vnet > 0.0) {
    Segment& last = seg_[last_[k]];
    if (std::abs(last.c - cin) < in_.tolerance)
      last.v += vnet;
    else
      add_segment(k, vnet, cin);
    tank_c_[n] = seg_[last_[k]].c;
    if (volume_[n] >= net_.nodes[n].max_volume) {  // full: the oldest water overflows
      double wsum = 0.0;
      withdraw(k, vnet, &wsum);
      balance_.outflow += wsum;
    }
  } else if (vnet < 0.0) {
    reverse(k);  // the newest water leaves first
    double wsum = 0.0;
    const double vsum = withdraw(k, -vnet, &wsum);
    reverse(k);
    tank_c_[n] = (wsum + win) / (vsum + vin);
  }
}

}  // namespace cgs::net
