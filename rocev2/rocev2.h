/* SPDX-License-Identifier: BSD-3-Clause */
/* The RoCEv2 wire library: one include for all of it. */
#ifndef ROCEV2_H
#define ROCEV2_H

#include "roce_build.h"
#include "roce_cm.h"
#include "roce_hdr.h"
#include "roce_icrc.h"
#include "roce_opcode.h"
#include "roce_parse.h"

#endif /* ROCEV2_H */
